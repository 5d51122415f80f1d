package hookd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
)

// orderedBackend opens a store, and the queue a client uses on it (nil: the store's own).
type orderedBackend struct {
	name string
	open func(t *testing.T, log *logcheck.Log) (hookd.Store, hookd.Queue)
}

// orderedBackends are SQLite's own queue, PostgreSQL's own queue, and the Redis queue (on a
// SQLite store); the last two skip when their service's URL is unset.
var orderedBackends = []orderedBackend{
	{"sqlite", func(t *testing.T, log *logcheck.Log) (hookd.Store, hookd.Queue) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, nil
	}},
	{"postgres", func(t *testing.T, log *logcheck.Log) (hookd.Store, hookd.Queue) {
		u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
		if u == "" {
			t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL, e.g. " +
				"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, to run this on PostgreSQL")
		}
		schema := testSchema(t, u)
		s, err := postgres.Open(context.Background(), u, &postgres.Config{Schema: schema, Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, nil
	}},
	{"redis", func(t *testing.T, log *logcheck.Log) (hookd.Store, hookd.Queue) {
		u := os.Getenv("HOOKD_TEST_REDIS_URL")
		if u == "" {
			t.Skip("HOOKD_TEST_REDIS_URL is unset: set it to a Redis URL, e.g. redis://127.0.0.1:6379/0, " +
				"to run this on the Redis queue")
		}
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		var b [4]byte
		_, _ = rand.Read(b[:])
		// A short SweepAfter, so that sweeps run among the parked deliveries during the test.
		q, err := redisqueue.New(u, s, nil, &redisqueue.Config{
			Namespace: "t.ordered." + hex.EncodeToString(b[:]), Logger: log.Logger(),
			SweepAfter: 300 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close() })
		return s, q
	}},
}

// testSchema returns a fresh PostgreSQL schema's name, dropped with everything in it when the
// test or benchmark ends.
func testSchema(t testing.TB, u string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "hookd_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// orderRig is a started client on one backend, with an application.
type orderRig struct {
	ctx    context.Context
	client *hookd.Client
	store  hookd.Store
	app    *hookd.Application
}

func newOrderRig(t *testing.T, be orderedBackend) *orderRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	log := logcheck.New(t)
	store, queue := be.open(t, log)
	cfg := testConfig()
	cfg.Queue, cfg.Logger = queue, log.Logger()
	// Three quick retries, and a fourth an hour on, for endpoints whose own schedule waits long.
	cfg.RetrySchedule = []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, time.Hour}
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Stop(ctx)
	})
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	return &orderRig{ctx: ctx, client: c, store: store, app: app}
}

// sendSeq sends messages 0..n-1, one after another, each with its number in the payload.
func (r *orderRig) sendSeq(t *testing.T, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := r.client.Send(r.ctx, r.app.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"seq": i}}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitSettled waits until no delivery to the endpoint is pending, and returns its deliveries by
// status.
func (r *orderRig) waitSettled(t *testing.T, epID string) map[hookd.DeliveryStatus]int {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		page, err := r.store.ListDeliveries(r.ctx, hookd.DeliveryFilter{AppID: r.app.ID, EndpointID: epID, Status: hookd.DeliveryPending, ListOptions: hookd.ListOptions{Limit: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoint %s still has pending deliveries: %+v", epID, page.Data[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := map[hookd.DeliveryStatus]int{}
	f := hookd.DeliveryFilter{AppID: r.app.ID, EndpointID: epID, ListOptions: hookd.ListOptions{Limit: 250}}
	for {
		page, err := r.store.ListDeliveries(r.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Data {
			out[d.Status]++
		}
		if page.Done {
			return out
		}
		f.Iterator = page.Iterator
	}
}

// seqRecv is a receiver on 127.0.0.1 that reads each request's message number and answers with
// status(seq, n) for the n-th arrival of it (1 for the first). It records the order of first
// arrivals, every arrival, and the most requests it had in flight at once.
type seqRecv struct {
	srv    *httptest.Server
	status func(seq, n int) int
	// hold, when set, is waited on before answering a request of message number holdSeq.
	hold    chan struct{}
	holdSeq int

	mu          sync.Mutex
	first       []int
	arrivals    []int
	count       map[int]int
	inFlight    int
	maxInFlight int
	arrived     chan struct{} // gets a value at each arrival, when not full
}

func newSeqRecv(t *testing.T, status func(seq, n int) int) *seqRecv {
	r := &seqRecv{status: status, count: map[int]int{}, holdSeq: -1, arrived: make(chan struct{}, 1)}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Listener = ln
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *seqRecv) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var p struct {
		Seq int `json:"seq"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.inFlight++
	r.maxInFlight = max(r.maxInFlight, r.inFlight)
	r.count[p.Seq]++
	n := r.count[p.Seq]
	if n == 1 {
		r.first = append(r.first, p.Seq)
	}
	r.arrivals = append(r.arrivals, p.Seq)
	hold := r.hold
	r.mu.Unlock()
	select {
	case r.arrived <- struct{}{}:
	default:
	}
	if hold != nil && p.Seq == r.holdSeq {
		<-hold
	}
	code := http.StatusOK
	if r.status != nil {
		code = r.status(p.Seq, n)
	}
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	w.WriteHeader(code)
}

// snapshot returns the first arrivals, every arrival, and the most in flight at once.
func (r *seqRecv) snapshot() (first, arrivals []int, maxInFlight int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.first), slices.Clone(r.arrivals), r.maxInFlight
}

func (r *seqRecv) endpoint(t *testing.T, rig *orderRig, in hookd.EndpointIn) *hookd.Endpoint {
	t.Helper()
	in.URL = r.srv.URL + "/hooks"
	ep, err := rig.client.CreateEndpoint(rig.ctx, rig.app.ID, &in)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// seqs returns 0..n-1.
func seqs(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func eachOrderedBackend(t *testing.T, fn func(t *testing.T, rig *orderRig)) {
	for _, be := range orderedBackends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			fn(t, newOrderRig(t, be))
		})
	}
}

// TestOrderedEndpointDeliversInOrder: a receiver that fails some messages a few times gets every
// message, first arrivals strictly in message order, never two at once; an unordered endpoint
// beside it takes its messages while the ordered one's head is held.
func TestOrderedEndpointDeliversInOrder(t *testing.T) {
	t.Parallel()
	eachOrderedBackend(t, func(t *testing.T, rig *orderRig) {
		const n = 40
		recv := newSeqRecv(t, func(seq, k int) int {
			if seq%4 == 1 && k <= 2 { // fails twice, then takes it (the schedule has more retries)
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		recv.hold, recv.holdSeq = make(chan struct{}), 0
		// A long attempt timeout: the held head is one attempt, not a timeout and a retry.
		ordered := recv.endpoint(t, rig, hookd.EndpointIn{Ordered: true, AttemptTimeout: 20 * time.Second})
		if !ordered.Ordered {
			t.Fatal("created endpoint is not ordered")
		}
		side := newSeqRecv(t, nil)
		plain := side.endpoint(t, rig, hookd.EndpointIn{})
		rig.sendSeq(t, 0, n)

		// Every message reaches the unordered endpoint while message 0 is held at the ordered one.
		if got := rig.waitSettled(t, plain.ID); got[hookd.DeliveryDelivered] != n {
			t.Fatalf("unordered endpoint: %v, want %d delivered", got, n)
		}
		first, _, _ := recv.snapshot()
		if !slices.Equal(first, []int{0}) {
			t.Fatalf("ordered endpoint's arrivals while its head is held: %v, want [0]", first)
		}
		close(recv.hold)

		got := rig.waitSettled(t, ordered.ID)
		if got[hookd.DeliveryDelivered] != n {
			t.Fatalf("ordered endpoint: %v, want %d delivered", got, n)
		}
		first, arrivals, most := recv.snapshot()
		if !slices.Equal(first, seqs(0, n)) {
			t.Fatalf("first arrivals %v, want 0..%d in order", first, n-1)
		}
		if most != 1 {
			t.Fatalf("%d requests in flight at once to the ordered endpoint, want 1", most)
		}
		// A message's retries come before any later message's first arrival.
		for i := 1; i < len(arrivals); i++ {
			if arrivals[i] < arrivals[i-1] {
				t.Fatalf("arrival %d is message %d after message %d: %v", i, arrivals[i], arrivals[i-1], arrivals)
			}
		}
		if _, _, plainMost := side.snapshot(); plainMost < 1 {
			t.Fatal("unordered endpoint got nothing")
		}
	})
}

// TestOrderedHeadExhaustedLetsTheNextGo: a head that fails its whole (short) schedule ends failed
// and the next message goes only then.
func TestOrderedHeadExhaustedLetsTheNextGo(t *testing.T) {
	t.Parallel()
	eachOrderedBackend(t, func(t *testing.T, rig *orderRig) {
		recv := newSeqRecv(t, func(seq, _ int) int {
			if seq == 0 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		ep := recv.endpoint(t, rig, hookd.EndpointIn{Ordered: true, RetrySchedule: []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}})
		rig.sendSeq(t, 0, 5)
		got := rig.waitSettled(t, ep.ID)
		if got[hookd.DeliveryFailed] != 1 || got[hookd.DeliveryDelivered] != 4 {
			t.Fatalf("deliveries %v, want 1 failed and 4 delivered", got)
		}
		_, arrivals, most := recv.snapshot()
		if want := []int{0, 0, 0, 1, 2, 3, 4}; !slices.Equal(arrivals, want) {
			t.Fatalf("arrivals %v, want %v (the head's three attempts, then the rest)", arrivals, want)
		}
		if most != 1 {
			t.Fatalf("%d in flight at once, want 1", most)
		}
	})
}

// TestOrderedHeadGoneCancelsInOrder: a head answered 410 disables the endpoint; every later
// delivery is cancelled, none attempted, none left pending.
func TestOrderedHeadGoneCancelsInOrder(t *testing.T) {
	t.Parallel()
	eachOrderedBackend(t, func(t *testing.T, rig *orderRig) {
		recv := newSeqRecv(t, func(seq, _ int) int {
			if seq == 0 {
				return http.StatusGone
			}
			return http.StatusOK
		})
		recv.hold, recv.holdSeq = make(chan struct{}), 0 // until every message has its delivery
		ep := recv.endpoint(t, rig, hookd.EndpointIn{Ordered: true, AttemptTimeout: 20 * time.Second})
		rig.sendSeq(t, 0, 6)
		close(recv.hold)
		got := rig.waitSettled(t, ep.ID)
		if got[hookd.DeliveryCancelled] != 6 {
			t.Fatalf("deliveries %v, want 6 cancelled", got)
		}
		if _, arrivals, _ := recv.snapshot(); !slices.Equal(arrivals, []int{0}) {
			t.Fatalf("arrivals %v, want [0]", arrivals)
		}
	})
}

// TestOrderedTurnedOffDeliversParked: behind a head that waits an hour for its retry, the parked
// messages go once the endpoint stops being ordered; the head keeps its retry.
func TestOrderedTurnedOffDeliversParked(t *testing.T) {
	t.Parallel()
	eachOrderedBackend(t, func(t *testing.T, rig *orderRig) {
		recv := newSeqRecv(t, func(seq, _ int) int {
			if seq == 0 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		ep := recv.endpoint(t, rig, hookd.EndpointIn{Ordered: true, RetrySchedule: []time.Duration{time.Hour}})
		rig.sendSeq(t, 0, 5)
		// Wait until the head's failed attempt is recorded and the others are parked: the
		// receiver sees the request before its record commits.
		deadline := time.Now().Add(30 * time.Second)
		var head *hookd.Delivery
		for {
			page, err := rig.store.ParkedDeliveries(rig.ctx, ep.ID, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			head, err = rig.store.FirstPendingDelivery(rig.ctx, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, arrivals, _ := recv.snapshot()
			if len(page) == 4 && len(arrivals) == 1 && head.Attempts == 1 && head.NextAttemptAt != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("parked %d, %d arrivals, head %+v; want 4 parked and the head's one attempt recorded with a retry due", len(page), len(arrivals), head)
			}
			time.Sleep(10 * time.Millisecond)
		}

		if _, err := rig.client.EditEndpoint(rig.ctx, rig.app.ID, ep.ID, func(in *hookd.EndpointIn) error {
			in.Ordered = false
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		deadline = time.Now().Add(30 * time.Second)
		for {
			page, err := rig.store.ListDeliveries(rig.ctx, hookd.DeliveryFilter{AppID: rig.app.ID, EndpointID: ep.ID, Status: hookd.DeliveryDelivered})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Data) == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d delivered after ordered was turned off, want 4", len(page.Data))
			}
			time.Sleep(10 * time.Millisecond)
		}
		still, err := rig.store.GetDelivery(rig.ctx, head.ID)
		if err != nil || still.Status != hookd.DeliveryPending || still.NextAttemptAt == nil || !still.NextAttemptAt.Equal(*head.NextAttemptAt) {
			t.Fatalf("head after the change: %+v, %v; want its retry kept at %v", still, err, head.NextAttemptAt)
		}
	})
}

// TestOrderedRecoverTakesItsPlace: a failed delivery of an ordered endpoint that is recovered is
// pending again and goes once it is the head, with one more scheduled attempt.
func TestOrderedRecoverTakesItsPlace(t *testing.T) {
	t.Parallel()
	eachOrderedBackend(t, func(t *testing.T, rig *orderRig) {
		recv := newSeqRecv(t, func(seq, k int) int {
			if seq == 0 && k == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		ep := recv.endpoint(t, rig, hookd.EndpointIn{Ordered: true, RetrySchedule: []time.Duration{}}) // no retries
		rig.sendSeq(t, 0, 3)
		if got := rig.waitSettled(t, ep.ID); got[hookd.DeliveryFailed] != 1 || got[hookd.DeliveryDelivered] != 2 {
			t.Fatalf("deliveries %v, want 1 failed and 2 delivered", got)
		}
		n, err := rig.client.Recover(rig.ctx, rig.app.ID, ep.ID, time.Now().Add(-time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("Recover: %d, %v; want 1 queued", n, err)
		}
		if got := rig.waitSettled(t, ep.ID); got[hookd.DeliveryDelivered] != 3 {
			t.Fatalf("after the recovery: %v, want 3 delivered", got)
		}
		head, err := rig.store.ListDeliveries(rig.ctx, hookd.DeliveryFilter{AppID: rig.app.ID, EndpointID: ep.ID, ListOptions: hookd.ListOptions{Limit: 1}})
		if err != nil || len(head.Data) != 1 || head.Data[0].Attempts != 2 {
			t.Fatalf("the recovered delivery: %+v, %v; want 2 scheduled attempts", head.Data, err)
		}
		if _, arrivals, _ := recv.snapshot(); !slices.Equal(arrivals, []int{0, 1, 2, 0}) {
			t.Fatalf("arrivals %v, want [0 1 2 0]", arrivals)
		}
	})
}
