package hookd_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
)

// hangingReceiver holds every request for hold, counting the requests in flight at once. A
// request leaves the count before its answer is sent, so a client's next request never overlaps
// it in the count (a request the client times out on would stay counted until the server sees
// the connection close).
type hangingReceiver struct {
	srv       *httptest.Server
	now, most atomic.Int32
	requests  atomic.Int32
	release   chan struct{}
}

func newHangingReceiver(t *testing.T, hold time.Duration) *hangingReceiver {
	r := &hangingReceiver{release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		n := r.now.Add(1)
		for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
		}
		select {
		case <-r.release:
		case <-req.Context().Done():
		case <-time.After(hold):
		}
		r.now.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		close(r.release)
		r.srv.Close()
	})
	return r
}

// pgSchemaURL returns the PostgreSQL test URL and a fresh schema, dropped when the test ends.
func pgSchemaURL(t *testing.T) (string, string) {
	t.Helper()
	u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run the tests of the cap across processes")
	}
	schema := testSchema(t, u)
	return u, schema
}

// fleetNamespace returns the ns of fleetClient for queue ("", "river" or "redis"): for the Redis
// queue the schema's name, whose keys are deleted when the test ends; without Redis it skips.
func fleetNamespace(t *testing.T, queue, schema string) string {
	t.Helper()
	if queue != "redis" {
		return queue
	}
	u := os.Getenv("HOOKD_TEST_REDIS_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_REDIS_URL is unset: set it to a Redis URL (e.g. redis://127.0.0.1:6379/0) to run the Redis queue's case")
	}
	t.Cleanup(func() { deleteRedisNamespace(u, schema) })
	return schema
}

// fleetClient opens a store of its own on the schema, as another process would, and starts a
// client on it: on the store's queue, on River's when ns is "river", or else on a Redis queue in
// namespace ns when ns is set.
func fleetClient(t *testing.T, u, schema, ns string, log *logcheck.Log) *hookd.Client {
	return fleetClientLease(t, u, schema, ns, log, 0)
}

// fleetClientLease is fleetClient with Config.SlotLease lease.
func fleetClientLease(t *testing.T, u, schema, ns string, log *logcheck.Log, lease time.Duration) *hookd.Client {
	t.Helper()
	ctx := context.Background()
	store, err := postgres.Open(ctx, u, &postgres.Config{Schema: schema, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	timeout := 3 * time.Second
	if lease > 0 {
		timeout = 10 * time.Second // attempts that hang past several short leases
	}
	cfg := &hookd.Config{
		Logger:    log.Logger(),
		Delivery:  &delivery.Config{Timeout: timeout, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Workers:   map[hookd.Lane]int{hookd.LaneFirst: 32},
		SlotLease: lease,
	}
	switch ns {
	case "":
	case "river":
		q, err := store.NewRiverQueue(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Queue = q
	default:
		q, err := redisqueue.New(os.Getenv("HOOKD_TEST_REDIS_URL"), store, nil, &redisqueue.Config{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = q.Close() })
		cfg.Queue = q
	}
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
		_ = store.Close()
	})
	return c
}

// TestCapHoldsAcrossClients: two clients on one database, each on its own store as two
// processes are, deliver to an endpoint that never answers. The requests in flight at the
// receiver reach the endpoint's cap and never pass it (each client alone would allow the cap).
func TestCapHoldsAcrossClients(t *testing.T) {
	t.Parallel()
	t.Run("store queue", func(t *testing.T) { t.Parallel(); capAcrossClients(t, "") })
	t.Run("river queue", func(t *testing.T) { t.Parallel(); capAcrossClients(t, "river") })
	t.Run("redis queue", func(t *testing.T) { t.Parallel(); capAcrossClients(t, "redis") })
}

// capAcrossClients runs TestCapHoldsAcrossClients on the store's queue (queue ""), River's
// ("river") or Redis ("redis").
func capAcrossClients(t *testing.T, queue string) {
	u, schema := pgSchemaURL(t)
	ns := fleetNamespace(t, queue, schema)
	log := logcheck.New(t)
	recv := newHangingReceiver(t, time.Second)
	a := fleetClient(t, u, schema, ns, log)
	b := fleetClient(t, u, schema, ns, log)
	ctx := t.Context()
	app, err := a.CreateApplication(ctx, &hookd.ApplicationIn{Name: "fleet", UID: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 4
	if _, err := a.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.srv.URL + "/hang", MaxInFlight: capacity}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := a.Send(ctx, app.ID, &hookd.MessageIn{EventType: "fleet.test", Payload: []byte(fmt.Sprintf(`{"seq":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	// Each attempt takes a second: watch four rounds of the cap's attempts, of both clients.
	time.Sleep(4 * time.Second)
	if got, n := recv.most.Load(), recv.requests.Load(); got != capacity || n < 3*capacity {
		t.Fatalf("at most %d requests in flight to the endpoint across two clients, want its cap %d (%d requests in all, want at least %d)", got, capacity, n, 3*capacity)
	}
	if queue == "redis" {
		return
	}
	// Stopped, the clients give back every slot they held.
	for _, c := range []*hookd.Client{a, b} {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.Stop(stopCtx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "hookd_endpoint_slots"}.Sanitize()).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d rows of hookd_endpoint_slots after both clients stopped, want none", rows)
	}
}

// TestSlotsRenewedAndGivenBack: with a lease of 1 s and attempts of 6 s, the clients' heartbeats
// keep the leases of the slots in use (the cap's number of deliveries, so that no refused job
// asks for slots again, which would set a lease too); once the deliveries are done, the idle
// slots are given back while the clients run.
func TestSlotsRenewedAndGivenBack(t *testing.T) {
	t.Parallel()
	u, schema := pgSchemaURL(t)
	log := logcheck.New(t)
	recv := newHangingReceiver(t, 6*time.Second)
	a := fleetClientLease(t, u, schema, "", log, time.Second)
	fleetClientLease(t, u, schema, "", log, time.Second)
	ctx := t.Context()
	app, err := a.CreateApplication(ctx, &hookd.ApplicationIn{Name: "fleet", UID: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 4
	if _, err := a.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.srv.URL + "/hang", MaxInFlight: capacity}); err != nil {
		t.Fatal(err)
	}
	for i := range capacity {
		if _, err := a.Send(ctx, app.ID, &hookd.MessageIn{EventType: "fleet.test", Payload: []byte(fmt.Sprintf(`{"seq":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	table := pgx.Identifier{schema, "hookd_endpoint_slots"}.Sanitize()
	var delivered, held int
	// Every delivery reaches the receiver (a loaded machine may start the last a second or two
	// after the first), then hangs past two more leases.
	for start := time.Now(); recv.most.Load() < capacity && time.Since(start) < 3*time.Second; {
		time.Sleep(10 * time.Millisecond)
	}
	if got := recv.most.Load(); got != capacity {
		t.Fatalf("at most %d requests in flight 3 s after the sends, while attempts hang 6 s, want the cap %d", got, capacity)
	}
	time.Sleep(2200 * time.Millisecond) // past two leases of the slots in use
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(slots), 0) FROM `+table+` WHERE lease_until > now()`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != capacity {
		t.Fatalf("%d slots leased while %d attempts hang past two leases, want %d: the leases were not renewed", held, capacity, capacity)
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "hookd_deliveries"}.Sanitize()+` WHERE status = 'delivered'`).Scan(&delivered); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(slots), 0) FROM `+table+` WHERE lease_until > now()`).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if delivered == capacity && held == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if delivered != capacity || held != 0 {
		t.Fatalf("%d of %d delivered, %d slots still leased by the running clients; want all delivered and the idle slots given back", delivered, capacity, held)
	}
}

// TestSlotLeaseValidated: a lease below MinSlotLease is refused with a message that says how to
// fix it.
func TestSlotLeaseValidated(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, err = hookd.NewClient(store, &hookd.Config{SlotLease: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "Config.SlotLease is 500ms: use at least 1s") {
		t.Fatalf("NewClient with SlotLease 500ms: %v, want the lease refused", err)
	}
}

// deleteRedisNamespace deletes the keys of namespace ns, asynq's and the slot leases', from the
// Redis at u.
func deleteRedisNamespace(u, ns string) {
	o, err := goredis.ParseURL(u)
	if err != nil {
		return
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx := context.Background()
	for _, pattern := range []string{"asynq:{" + ns + ":*", "hookd:{" + ns + "}:*"} {
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	}
	for _, l := range []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual} {
		c.SRem(ctx, "asynq:queues", redisqueue.QueueName(ns, l))
	}
}
