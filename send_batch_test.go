package hookd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	// The queue announces new jobs after the commit, from a goroutine of its own: not the
	// send's round trip, and not counted.
	if !strings.HasPrefix(d.SQL, "SELECT pg_notify(") {
		r.n.Add(1)
	}
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
// 16 sends with event ids, channels and tags: BEGIN with the reads, the messages, and COMMIT with
// the labels, the deliveries and the jobs, whatever the batch's size (before the batch writer: 9
// and 54).
func TestSendBatchRoundTrips(t *testing.T) {
	t.Parallel()
	r := setupBatch(t, "postgres", nil)
	const want = 3
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
				if trips != want {
					t.Errorf("a batch of %d sends took %d round trips, want %d", n, trips, want)
				}
			}
		}
	}
}

// forEachBackend runs test on SQLite and, with HOOKD_TEST_POSTGRES_URL, on PostgreSQL.
func forEachBackend(t *testing.T, cfg func() *hookd.Config, test func(t *testing.T, r *batchRig)) {
	for _, backend := range batchBackends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var c *hookd.Config
			if cfg != nil {
				c = cfg()
			}
			test(t, setupBatch(t, backend, c))
		})
	}
}

// A batch holding an event id twice writes the first and gives the second the first's message;
// one holding an event id already written gives the message written.
func TestSendBatchDuplicates(t *testing.T) {
	t.Parallel()
	forEachBackend(t, nil, func(t *testing.T, r *batchRig) {
		apps, msgs := sends(1, "before")
		res, errs := r.client.SendBatchForTest(r.ctx, apps, msgs)
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		before := res[0].Message.ID
		apps, msgs = sends(4, "")
		msgs[0].EventID, msgs[1].EventID, msgs[2].EventID, msgs[3].EventID = "twice", "before-0", "twice", "once"
		res, errs = r.client.SendBatchForTest(r.ctx, apps, msgs)
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if res[0].Duplicate || res[0].Deliveries != 2 || res[3].Duplicate || res[3].Deliveries != 2 {
			t.Errorf("the first of an event id: %+v and %+v, want written, to two endpoints", res[0], res[3])
		}
		if !res[1].Duplicate || res[1].Message.ID != before || res[1].Deliveries != 0 {
			t.Errorf("an event id written before: %+v, want message %s, a duplicate", res[1], before)
		}
		if !res[2].Duplicate || res[2].Message.ID != res[0].Message.ID || res[2].Deliveries != 0 {
			t.Errorf("an event id twice in the batch: %+v, want message %s, a duplicate", res[2], res[0].Message.ID)
		}
		for _, id := range []string{"twice", "before-0", "once"} {
			if _, err := r.client.GetMessage(r.ctx, "acme", id); err != nil {
				t.Errorf("message with event id %s: %v", id, err)
			}
		}
	})
}

// Concurrent batches that share event ids, in opposite orders, write each event id once; every
// other send of it is a duplicate of that message.
func TestSendBatchDuplicatesAcrossBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, nil, func(t *testing.T, r *batchRig) {
		const batches, n = 4, 8
		res := make([][]*hookd.SendResult, batches)
		var wg sync.WaitGroup
		for b := range batches {
			wg.Go(func() {
				apps, msgs := sends(n, "shared")
				if b%2 == 1 {
					slices.Reverse(msgs)
				}
				var errs []error
				res[b], errs = r.client.SendBatchForTest(r.ctx, apps, msgs)
				if err := errors.Join(errs...); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		byEvent := map[string][]*hookd.SendResult{}
		for _, rs := range res {
			for _, x := range rs {
				byEvent[x.Message.EventID] = append(byEvent[x.Message.EventID], x)
			}
		}
		for ev, rs := range byEvent {
			fresh := 0
			for _, x := range rs {
				if !x.Duplicate {
					fresh++
				}
				if x.Message.ID != rs[0].Message.ID {
					t.Errorf("event id %s: messages %s and %s", ev, x.Message.ID, rs[0].Message.ID)
				}
			}
			if fresh != 1 || len(rs) != batches {
				t.Errorf("event id %s: %d sends, %d not duplicates; want %d and 1", ev, len(rs), fresh, batches)
			}
		}
		page, err := r.client.ListMessages(r.ctx, "acme", hookd.MessageFilter{ListOptions: hookd.ListOptions{Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != n {
			t.Errorf("%d messages, want %d", len(page.Data), n)
		}
	})
}

// A send to an unknown application in a batch fails alone, with ErrNotFound; the others are
// written, by id or by uid.
func TestSendBatchUnknownApplicationFailsAlone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, nil, func(t *testing.T, r *batchRig) {
		app, err := r.client.GetApplication(r.ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		apps, msgs := sends(5, "")
		apps[1], apps[3] = "nobody", app.ID
		res, errs := r.client.SendBatchForTest(r.ctx, apps, msgs)
		for i := range msgs {
			if i == 1 {
				if !errors.Is(errs[i], hookd.ErrNotFound) || res[i] != nil {
					t.Errorf("send to an unknown application: %v, %+v; want ErrNotFound", errs[i], res[i])
				}
				continue
			}
			if errs[i] != nil || res[i].Deliveries != 2 || res[i].Message.AppID != app.ID {
				t.Errorf("send %d: %v, %+v; want written to two endpoints of %s", i, errs[i], res[i], app.ID)
			}
		}
	})
}

// A batch past the application's message rate writes what the rate has room for; the others are
// refused with ErrRateLimited, and nothing of theirs is written.
func TestSendBatchRateLimited(t *testing.T) {
	t.Parallel()
	cfg := func() *hookd.Config {
		c := testConfig()
		c.MessageRatePerApp, c.MessageBurstPerApp = 0.01, 3
		return c
	}
	forEachBackend(t, cfg, func(t *testing.T, r *batchRig) {
		apps, msgs := sends(5, "rate")
		res, errs := r.client.SendBatchForTest(r.ctx, apps, msgs)
		for i := range msgs {
			if i < 3 {
				if errs[i] != nil || res[i].Deliveries != 2 {
					t.Errorf("send %d: %v, %+v; want written", i, errs[i], res[i])
				}
				continue
			}
			if !errors.Is(errs[i], hookd.ErrRateLimited) || res[i] != nil {
				t.Errorf("send %d: %v, %+v; want ErrRateLimited", i, errs[i], res[i])
			}
			if _, err := r.client.GetMessage(r.ctx, "acme", msgs[i].EventID); !errors.Is(err, hookd.ErrNotFound) {
				t.Errorf("message of refused send %d: %v, want ErrNotFound", i, err)
			}
		}
	})
}

// The channels and tags of every message of a batch are written: the lists by channel and by
// tag find them all.
func TestSendBatchLabels(t *testing.T) {
	t.Parallel()
	forEachBackend(t, nil, func(t *testing.T, r *batchRig) {
		const n = 16
		apps, msgs := sends(n, "labels")
		msgs[5].Tags = append(msgs[5].Tags, "t1") // a repeat, written once
		if _, errs := r.client.SendBatchForTest(r.ctx, apps, msgs); errors.Join(errs...) != nil {
			t.Fatal(errors.Join(errs...))
		}
		for _, f := range []struct {
			filter hookd.MessageFilter
			want   int
		}{
			{hookd.MessageFilter{Channel: "eu"}, n},
			{hookd.MessageFilter{Channel: "us"}, n},
			{hookd.MessageFilter{Tag: "t1"}, n},
			{hookd.MessageFilter{Tag: "n7"}, 1},
		} {
			f.filter.Limit = 100
			page, err := r.client.ListMessages(r.ctx, "acme", f.filter)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Data) != f.want {
				t.Errorf("messages with channel %q, tag %q: %d, want %d", f.filter.Channel, f.filter.Tag, len(page.Data), f.want)
			}
		}
	})
}
