package bus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// backend is a store the bus runs on, and how to begin a transaction of the app's on it.
type backend struct {
	name  string
	store bus.Outbox
	begin func(ctx context.Context) (commit, rollback func() error, tx any)
	// second opens another process's store on the same database (nil: one process per database).
	second func(t *testing.T) bus.Outbox
}

// backends returns SQLite (a file in t.TempDir) and, with HOOKD_TEST_POSTGRES_URL, PostgreSQL
// (a schema of the test's own).
func backends(t *testing.T) []backend {
	t.Helper()
	ctx := context.Background()
	log := logcheck.New(t) // the stores'
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	out := []backend{{name: "sqlite", store: s, begin: func(ctx context.Context) (func() error, func() error, any) {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tx.Commit, tx.Rollback, tx
	}}}
	u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if u == "" {
		t.Log("HOOKD_TEST_POSTGRES_URL is unset: the PostgreSQL cases are skipped")
		return out
	}
	schema := fmt.Sprintf("hookd_bus_%d", time.Now().UnixNano())
	open := func(t *testing.T) *postgres.Store {
		p, err := postgres.Open(ctx, u, &postgres.Config{Schema: schema, Logger: log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	p := open(t)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
	})
	return append(out, backend{name: "postgres", store: p, begin: func(ctx context.Context) (func() error, func() error, any) {
		tx, err := p.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }, tx
	}, second: func(t *testing.T) bus.Outbox { return open(t) }})
}

// clock is an injected clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// calls records a handler's calls.
type calls struct {
	mu   sync.Mutex
	all  []*bus.Dispatch
	at   []time.Time
	seen chan struct{}
}

func newCalls() *calls { return &calls{seen: make(chan struct{}, 10_000)} }

func (c *calls) record(d *bus.Dispatch, at time.Time) int {
	c.mu.Lock()
	c.all = append(c.all, d)
	c.at = append(c.at, at)
	n := len(c.all)
	c.mu.Unlock()
	c.seen <- struct{}{}
	return n
}

func (c *calls) count() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.all) }

func (c *calls) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for c.count() < n {
		select {
		case <-c.seen:
		case <-deadline:
			t.Fatalf("%d handler calls after 10 s, want %d", c.count(), n)
		}
	}
}

// newBus returns a bus on out, stopped when t ends; without a logger in cfg, its logs are
// checked for secrets then.
func newBus(t *testing.T, out bus.Outbox, cfg *bus.Config) *bus.Bus {
	t.Helper()
	if cfg == nil || cfg.Logger == nil {
		withLog := bus.Config{}
		if cfg != nil {
			withLog = *cfg
		}
		withLog.Logger = logcheck.New(t).Logger()
		cfg = &withLog
	}
	b, err := bus.New(out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return b
}

// A rolled-back transaction publishes nothing; a committed one is dispatched right after its
// commit, without waiting for a poll (the poll is an hour apart here).
func TestPublishCommitsWithTheTransaction(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			c := newCalls()
			b := newBus(t, be.store, &bus.Config{PollInterval: time.Hour})
			b.Subscribe("tenancy.invitation.created", func(ctx context.Context, d *bus.Dispatch) error {
				c.record(d, time.Now())
				return nil
			})
			if err := b.Start(ctx); err != nil {
				t.Fatal(err)
			}
			_, rollback, tx := be.begin(ctx)
			if err := b.Publish(ctx, tx, bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"email": "rolled@back"}}); err != nil {
				t.Fatal(err)
			}
			if err := rollback(); err != nil {
				t.Fatal(err)
			}
			commit, _, tx := be.begin(ctx)
			if err := b.Publish(ctx, tx, bus.Event{Name: "tenancy.invitation.created", AggregateID: "inv_1", Payload: map[string]string{"email": "a@b"}}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			if n := c.count(); n != 0 {
				t.Fatalf("%d handler calls before the commit", n)
			}
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			c.wait(t, 1)
			if err := b.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			if n := c.count(); n != 1 {
				t.Fatalf("%d handler calls, want 1: the rolled-back event was dispatched, or the committed one twice", n)
			}
			d := c.all[0]
			if d.AggregateID != "inv_1" || string(d.Payload) != `{"email":"a@b"}` || d.Attempt != 1 {
				t.Errorf("delivery %+v", d)
			}
		})
	}
}

// A handler that fails twice succeeds on the third attempt, at the scheduled times: 30 s and then
// 1 min after the failures, on the injected clock.
func TestRetriesOnSchedule(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
			c := newCalls()
			var errs []string
			var mu sync.Mutex
			b := newBus(t, be.store, &bus.Config{Now: clk.Now, PollInterval: time.Hour,
				OnError: func(d *bus.Dispatch, err error, dead bool) {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("attempt %d dead=%v: %v", d.Attempt, dead, err))
					mu.Unlock()
				}})
			b.Subscribe("billing.subscription.updated", func(ctx context.Context, d *bus.Dispatch) error {
				if n := c.record(d, clk.Now()); n <= 2 {
					return fmt.Errorf("receiver down (%d)", n)
				}
				return nil
			})
			if err := b.Start(ctx); err != nil {
				t.Fatal(err)
			}
			commit, _, tx := be.begin(ctx)
			if err := b.Publish(ctx, tx, bus.Event{Name: "billing.subscription.updated", Payload: map[string]int{"seats": 3}}); err != nil {
				t.Fatal(err)
			}
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			c.wait(t, 1)
			waitSettled(t, ctx, b, be.store, clk, 1)
			for _, step := range []struct {
				advance time.Duration
				want    int
			}{{29 * time.Second, 1}, {time.Second, 2}, {59 * time.Second, 2}, {time.Second, 3}, {time.Hour, 3}} {
				clk.Add(step.advance)
				if err := b.Poll(ctx); err != nil {
					t.Fatal(err)
				}
				if n := c.count(); n != step.want {
					t.Fatalf("after %s more: %d calls, want %d", step.advance, n, step.want)
				}
			}
			start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			want := []time.Time{start, start.Add(30 * time.Second), start.Add(90 * time.Second)}
			for i, at := range c.at {
				if !at.Equal(want[i]) {
					t.Errorf("attempt %d at %s, want %s", i+1, at.Format(time.TimeOnly), want[i].Format(time.TimeOnly))
				}
				if c.all[i].Attempt != i+1 {
					t.Errorf("call %d has attempt %d", i+1, c.all[i].Attempt)
				}
			}
			if len(errs) != 2 {
				t.Errorf("OnError calls %q, want 2", errs)
			}
			if failed, err := b.Failed(ctx, "", 10); err != nil || len(failed) != 0 {
				t.Errorf("Failed: %v, %v; want none", failed, err)
			}
		})
	}
}

// waitSettled waits until the event's attempt n is recorded (the watcher's dispatch runs on its
// own goroutine).
func waitSettled(t *testing.T, ctx context.Context, b *bus.Bus, out bus.Outbox, clk *clock, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		due, err := out.DueEvents(ctx, clk.Now().Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) == 1 && due[0].Attempts == n && due[0].LastError != "" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("attempt %d not settled after 10 s", n)
}

// After 8 failed attempts an event is dead-lettered: listed by Failed with its attempts and last
// error, and Redrive makes it pending again.
func TestDeadLetterAndRedrive(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
			c := newCalls()
			dead := 0
			b := newBus(t, be.store, &bus.Config{Now: clk.Now, PollInterval: time.Hour,
				OnError: func(d *bus.Dispatch, err error, isDead bool) {
					if isDead {
						dead++
					}
				}})
			fail := true
			b.Subscribe("tenancy.membership.added", func(ctx context.Context, d *bus.Dispatch) error {
				c.record(d, clk.Now())
				if fail {
					return errors.New("handler broken")
				}
				return nil
			})
			commit, _, tx := be.begin(ctx)
			if err := b.Publish(ctx, tx, bus.Event{Name: "tenancy.membership.added", Payload: map[string]string{"orgId": "org_1"}}); err != nil {
				t.Fatal(err)
			}
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			for i := range 12 { // the polls alone: 30 s, 1, 2, 4, 8 min, then 15 min each
				if err := b.Poll(ctx); err != nil {
					t.Fatal(err)
				}
				if c.count() != min(i+1, 8) {
					t.Fatalf("poll %d: %d calls, want %d", i+1, c.count(), min(i+1, 8))
				}
				clk.Add(15 * time.Minute)
			}
			failed, err := b.Failed(ctx, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(failed) != 1 || failed[0].Status != bus.StatusFailed || failed[0].Attempts != 8 ||
				failed[0].LastError != "handler 1 of tenancy.membership.added: handler broken" {
				t.Fatalf("Failed: %+v", failed)
			}
			if dead != 1 {
				t.Errorf("OnError reported %d dead letters, want 1", dead)
			}
			if err := b.Redrive(ctx, "evt_missing"); !errors.Is(err, hookd.ErrNotFound) {
				t.Errorf("Redrive of a missing event: %v, want ErrNotFound", err)
			}
			fail = false
			if err := b.Redrive(ctx, failed[0].ID); err != nil {
				t.Fatal(err)
			}
			if err := b.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			if c.count() != 9 || c.all[8].Attempt != 1 {
				t.Fatalf("after redrive: %d calls (last attempt %d), want a 9th, attempt 1", c.count(), c.all[c.count()-1].Attempt)
			}
			if failed, _ := b.Failed(ctx, "", 10); len(failed) != 0 {
				t.Errorf("still failed after a successful redrive: %+v", failed)
			}
		})
	}
}

// Two buses on one database (two processes; on SQLite, two buses of one store) never run one
// attempt twice: every event is handled once.
func TestTwoBusesNeverRunOneAttemptTwice(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			other := be.store
			if be.second != nil {
				other = be.second(t)
			}
			c := newCalls()
			handler := func(ctx context.Context, d *bus.Dispatch) error {
				c.record(d, time.Now())
				time.Sleep(time.Millisecond)
				return nil
			}
			b1 := newBus(t, be.store, &bus.Config{PollInterval: 5 * time.Millisecond})
			b2 := newBus(t, other, &bus.Config{PollInterval: 5 * time.Millisecond})
			for _, b := range []*bus.Bus{b1, b2} {
				b.Subscribe("tenancy.organization.created", handler)
				if err := b.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
			const n = 200
			for i := range n / 10 {
				commit, _, tx := be.begin(ctx)
				evs := make([]bus.Event, 10)
				for j := range evs {
					evs[j] = bus.Event{Name: "tenancy.organization.created", Payload: map[string]int{"n": i*10 + j}}
				}
				b := b1
				if i%2 == 1 {
					b = b2
				}
				if err := b.Publish(ctx, tx, evs...); err != nil {
					t.Fatal(err)
				}
				if err := commit(); err != nil {
					t.Fatal(err)
				}
			}
			c.wait(t, n)
			time.Sleep(200 * time.Millisecond)
			c.mu.Lock()
			defer c.mu.Unlock()
			seen := map[string]int{}
			for _, d := range c.all {
				seen[fmt.Sprintf("%s#%d", d.ID, d.Attempt)]++
			}
			if len(c.all) != n || len(seen) != n {
				t.Fatalf("%d calls for %d distinct attempts, want %d of each", len(c.all), len(seen), n)
			}
		})
	}
}

// The payload goes through JSON once, at Publish: the first dispatch sees exactly the bytes a
// redelivery does, a time.Time as its RFC 3339 string, an omitted field absent.
func TestPayloadIsJSONFromTheFirstDispatch(t *testing.T) {
	type invitation struct {
		Email     string    `json:"email"`
		InvitedAt time.Time `json:"invitedAt"`
		Note      string    `json:"note,omitempty"`
	}
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
			c := newCalls()
			b := newBus(t, be.store, &bus.Config{Now: clk.Now, PollInterval: time.Hour})
			b.Subscribe("tenancy.invitation.created", func(ctx context.Context, d *bus.Dispatch) error {
				if c.record(d, clk.Now()) == 1 {
					return errors.New("first attempt fails")
				}
				return nil
			})
			at := time.Date(2026, 11, 30, 9, 30, 15, 123456789, time.FixedZone("CET", 3600))
			commit, _, tx := be.begin(ctx)
			if err := b.Publish(ctx, tx, bus.Event{Name: "tenancy.invitation.created", Payload: invitation{Email: "a@b", InvitedAt: at}}); err != nil {
				t.Fatal(err)
			}
			if err := commit(); err != nil {
				t.Fatal(err)
			}
			if err := b.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			clk.Add(30 * time.Second)
			if err := b.Poll(ctx); err != nil {
				t.Fatal(err)
			}
			if c.count() != 2 {
				t.Fatalf("%d calls, want 2", c.count())
			}
			first, second := c.all[0].Payload, c.all[1].Payload
			want := `{"email":"a@b","invitedAt":"2026-11-30T09:30:15.123456789+01:00"}`
			if string(first) != want || string(second) != want {
				t.Errorf("first dispatch %s, redelivery %s, want both %s", first, second, want)
			}
			var got map[string]any
			if err := json.Unmarshal(first, &got); err != nil {
				t.Fatal(err)
			}
			if _, ok := got["invitedAt"].(string); !ok {
				t.Errorf("invitedAt is %T on the first dispatch, want a string", got["invitedAt"])
			}
		})
	}
}

// Publish refuses what it cannot write, and writes nothing of the batch.
func TestPublishRefusesBadEvents(t *testing.T) {
	be := backends(t)[0]
	ctx := context.Background()
	b := newBus(t, be.store, nil)
	commit, _, tx := be.begin(ctx)
	for _, tc := range []struct {
		ev    bus.Event
		field string
	}{
		{bus.Event{Payload: 1}, "Name"},
		{bus.Event{Name: "x", Payload: func() {}}, "Payload"},
		{bus.Event{Name: "x", Payload: make(chan int)}, "Payload"},
	} {
		err := b.Publish(ctx, tx, bus.Event{Name: "ok", Payload: 1}, tc.ev)
		var ve *hookd.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("Publish(%+v): %v, want a ValidationError on %s", tc.ev, err, tc.field)
		}
	}
	if err := b.Publish(ctx, "not a transaction", bus.Event{Name: "x"}); !errors.Is(err, hookd.ErrUnsupportedTx) {
		t.Errorf("Publish with a string for tx: %v, want ErrUnsupportedTx", err)
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	due, err := be.store.DueEvents(ctx, time.Now().Add(time.Hour), 10)
	if err != nil || len(due) != 0 {
		t.Errorf("due after refused publishes: %v, %v; want none", due, err)
	}
	if _, err := bus.New(be.store, &bus.Config{MaxAttempts: -1}); err == nil {
		t.Error("New with MaxAttempts -1: nil error")
	}
}
