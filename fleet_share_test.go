package hookd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
)

// TestFleetSlotsSharedFairly: two clients on one database, as two processes, both busy with one
// fast endpoint whose cap is 8. Each settles near half the cap, and the jobs refused a slot wait
// in their worker's line rather than snooze: few snoozes for the deliveries made. (Without the
// sharing, one client holds most of the slots and the other's jobs snooze each time they are
// refused.)
func TestFleetSlotsSharedFairly(t *testing.T) {
	t.Parallel()
	t.Run("store queue", func(t *testing.T) { t.Parallel(); slotsSharedFairly(t, "") })
	t.Run("redis queue", func(t *testing.T) { t.Parallel(); slotsSharedFairly(t, "redis") })
}

// slotsSharedFairly runs TestFleetSlotsSharedFairly on the store's queue and leaser (queue "")
// or the Redis queue's ("redis").
func slotsSharedFairly(t *testing.T, queue string) {
	u, schema := pgSchemaURL(t)
	ns := fleetNamespace(t, queue, schema)
	log := logcheck.New(t)
	var delivered atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(5 * time.Millisecond)
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a := fleetClient(t, u, schema, ns, log)
	b := fleetClient(t, u, schema, ns, log)
	ctx := t.Context()
	app, err := a.CreateApplication(ctx, &hookd.ApplicationIn{Name: "fleet", UID: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 8
	ep, err := a.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: srv.URL + "/fast", MaxInFlight: capacity})
	if err != nil {
		t.Fatal(err)
	}

	// A steady load: producers send until the test has watched the clients.
	load, stopLoad := context.WithCancel(ctx)
	var producers sync.WaitGroup
	for p := range 4 {
		producers.Go(func() {
			c := []*hookd.Client{a, b}[p%2]
			for i := 0; load.Err() == nil; i++ {
				_, err := c.Send(load, app.ID, &hookd.MessageIn{EventType: "fleet.test", Payload: []byte(fmt.Sprintf(`{"p":%d,"seq":%d}`, p, i))})
				if err != nil && load.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() { stopLoad(); producers.Wait() }()

	time.Sleep(time.Second) // both reach the endpoint
	snoozed0 := a.SnoozedForTest() + b.SnoozedForTest()
	delivered0 := delivered.Load()
	var heldA, heldB []int
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		heldA = append(heldA, a.HeldSlotsForTest(ep.ID))
		heldB = append(heldB, b.HeldSlotsForTest(ep.ID))
	}
	snoozed := a.SnoozedForTest() + b.SnoozedForTest() - snoozed0
	made := delivered.Load() - delivered0
	stopLoad()
	producers.Wait()

	medA, medB := median(heldA), median(heldB)
	t.Logf("held slots, median of %d looks: %d and %d; %d deliveries, %d snoozes", len(heldA), medA, medB, made, snoozed)
	for _, m := range []int{medA, medB} {
		if m < capacity/2-1 || m > capacity/2+1 {
			t.Errorf("the clients held a median of %d and %d slots of the cap %d under a load from both, want each near %d", medA, medB, capacity, capacity/2)
			break
		}
	}
	if made < 100 {
		t.Fatalf("%d deliveries in 3 s under load: the endpoint was hardly worked", made)
	}
	// Under the race detector the attempts outlast capWait, and refused jobs snooze as they should.
	if snoozed*3 > made && !raceEnabled {
		t.Errorf("%d jobs snoozed for %d deliveries, want at most one for 3: refused jobs should wait in their line for the share", snoozed, made)
	}
}

// median returns the median of xs.
func median(xs []int) int {
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}

// TestFleetOrderedEndpointTakesTurns: two clients share an ordered endpoint, whose cap is 1. The
// messages arrive in order and one at a time, and the client without the slot waits for it
// without spinning: a bounded number of snoozes for each delivery.
func TestFleetOrderedEndpointTakesTurns(t *testing.T) {
	t.Parallel()
	u, schema := pgSchemaURL(t)
	log := logcheck.New(t)
	var mu sync.Mutex
	var arrivals []int
	var now, most atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		var body struct{ Seq int }
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		arrivals = append(arrivals, body.Seq)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		now.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	a := fleetClient(t, u, schema, "", log)
	b := fleetClient(t, u, schema, "", log)
	ctx := t.Context()
	app, err := a.CreateApplication(ctx, &hookd.ApplicationIn{Name: "fleet", UID: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: srv.URL + "/ordered", Ordered: true}); err != nil {
		t.Fatal(err)
	}
	const n = 30
	for i := range n {
		c := []*hookd.Client{a, b}[i%2]
		if _, err := c.Send(ctx, app.ID, &hookd.MessageIn{EventType: "fleet.test", Payload: []byte(fmt.Sprintf(`{"seq":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		got := len(arrivals)
		mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != n {
		t.Fatalf("%d of %d messages arrived at the ordered endpoint", len(arrivals), n)
	}
	for i, seq := range arrivals {
		if seq != i {
			t.Fatalf("arrivals %v, want 0..%d in order", arrivals, n-1)
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d requests in flight at once to the ordered endpoint across two clients, want 1", m)
	}
	snoozed := a.SnoozedForTest() + b.SnoozedForTest()
	t.Logf("%d deliveries in order, %d snoozes", n, snoozed)
	if snoozed > 10*n {
		t.Errorf("%d snoozes for %d deliveries: the client without the slot spins", snoozed, n)
	}
}
