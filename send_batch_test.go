package hookd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// roundTrips counts what a pgx connection sends and waits for: each statement outside a batch
// and each batch, BEGIN and COMMIT among them (prepared statements are cached after their first
// use, so a warm connection waits once for each).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// batchRig is a client, not started (so that nothing but the sends runs on its store), on one
// backend, with application acme and two endpoints.
type batchRig struct {
	ctx    context.Context
	client *hookd.Client
	store  hookd.Store
	trips  *roundTrips // PostgreSQL only
}

// batchBackends are the stores the batch tests run on: SQLite always, PostgreSQL with
// HOOKD_TEST_POSTGRES_URL.
var batchBackends = []string{"sqlite", "postgres"}

func setupBatch(t *testing.T, backend string, cfg *hookd.Config) *batchRig {
	t.Helper()
	ctx := context.Background()
	log := logcheck.New(t)
	r := &batchRig{ctx: ctx}
	switch backend {
	case "sqlite":
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		r.store = s
	case "postgres":
		u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
		if u == "" {
			t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL to run the PostgreSQL case")
		}
		r.trips = &roundTrips{}
		s, err := postgres.Open(ctx, u, &postgres.Config{Schema: testSchema(t, u), Logger: log.Logger(), Tracer: r.trips})
		if err != nil {
			t.Fatal(err)
		}
		r.store = s
	}
	t.Cleanup(func() { _ = r.store.Close() })
	if cfg == nil {
		cfg = testConfig()
	}
	cfg.Logger = log.Logger()
	c, err := hookd.NewClient(r.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.client = c
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"eu", "us"} {
		if _, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: "https://example.com/" + ch, Channels: []string{ch}}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// sends returns n messages to acme, each on channels eu and us and tagged, with event ids
// prefix-0 ... (none when prefix is empty).
func sends(n int, prefix string) ([]string, []*hookd.MessageIn) {
	apps, msgs := make([]string, n), make([]*hookd.MessageIn, n)
	for i := range n {
		apps[i] = "acme"
		msgs[i] = &hookd.MessageIn{EventType: "invoice.paid", Channels: []string{"eu", "us"}, Tags: []string{"t1", fmt.Sprintf("n%d", i)},
			Payload: map[string]int{"n": i}}
		if prefix != "" {
			msgs[i].EventID = fmt.Sprintf("%s-%d", prefix, i)
		}
	}
	return apps, msgs
}

// TestSendBatchRoundTrips counts the round trips of a batch of sends on PostgreSQL, of 1 and of
// 16 sends with event ids, channels and tags: a batch costs a fixed few, whatever its size.
func TestSendBatchRoundTrips(t *testing.T) {
	t.Parallel()
	r := setupBatch(t, "postgres", nil)
	for _, n := range []int{1, 16} {
		// A first batch warms the connections' statement caches.
		for round, prefix := range []string{"warm", "count"} {
			apps, msgs := sends(n, fmt.Sprintf("%s%d", prefix, n))
			before := r.trips.n.Load()
			_, errs := r.client.SendBatchForTest(r.ctx, apps, msgs)
			trips := r.trips.n.Load() - before
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if round == 1 {
				t.Logf("a batch of %d sends: %d round trips", n, trips)
			}
		}
	}
}
