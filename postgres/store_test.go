package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	testURL(t)
	storetest.Run(t, func(t *testing.T) hookd.Store { return setup(t).store })
}

// countingHandler counts the records of each message it gets.
type countingHandler struct {
	mu     sync.Mutex
	counts map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Message]++
	return nil
}

func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[msg]
}

// TestMigrateOnceConcurrently: several processes opening one new schema at once apply each of
// hookd's migrations once, create none of River's tables, and all of them get a working store.
func TestMigrateOnceConcurrently(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	schema := freshSchema(t, u)
	logs := &countingHandler{counts: map[string]int{}}
	logger := slog.New(slog.NewMultiHandler(logs, testLogger(t).Handler()))
	const n = 6
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), u, &postgres.Config{Schema: schema, Logger: logger})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
	}

	ctx := t.Context()
	pool := stores[0].Pool()
	var rows, versions int
	if err := pool.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM hookd_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows != versions {
		t.Fatalf("hookd_migrations: %d rows for %d versions", rows, versions)
	}
	if got := logs.count("hookd migration applied"); got != versions {
		t.Errorf("hookd migrations applied %d times, want %d (once each)", got, versions)
	}
	// The store's own queue needs none of River's tables: none is created.
	if n := riverTables(t, pool, schema); n != 0 {
		t.Errorf("%d river_* tables in schema %s after Open, want 0", n, schema)
	}
	// Every table is in the schema, none in public.
	var inSchema int
	if err := pool.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = $1 AND tablename IN
		('hookd_migrations', 'hookd_messages', 'hookd_deliveries')`, schema).Scan(&inSchema); err != nil {
		t.Fatal(err)
	}
	if inSchema != 3 {
		t.Errorf("%d of hookd's tables in schema %s, want 3", inSchema, schema)
	}

	// Every store works; a later Migrate has nothing to do.
	for i, s := range stores {
		app := hookd.Application{ID: fmt.Sprintf("app_%d", i), Name: "x", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertApplication(ctx, &app) }); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	if _, err := postgres.Migrate(ctx, u, &postgres.Config{Schema: schema, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	if got := logs.count("hookd migration applied"); got != versions {
		t.Errorf("after Migrate: hookd migrations applied %d times, want %d", got, versions)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []*postgres.Config{{Schema: "bad-name"}, {Schema: "1abc"}, {Schema: strings.Repeat("s", 64)}, {MaxConns: -1}} {
		_, err := postgres.Open(t.Context(), "postgres://nobody@127.0.0.1:1/none", cfg)
		if !errors.Is(err, hookd.ErrInvalid) {
			t.Errorf("Open with %+v: %v, want an error matching hookd.ErrInvalid", cfg, err)
		}
	}
	_, err := postgres.Open(t.Context(), "postgres://user:sekrit@127.0.0.1:1/none?connect_timeout=1", &postgres.Config{Logger: testLogger(t)})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "sekrit") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// wrapCase is one kind of transaction an app hands to WrapTx: begin starts one, with the
// app's own statements, commit and rollback end it.
type wrapCase struct {
	name  string
	begin func(t *testing.T, b *bundle) appTx
}

// appTx is an app's transaction, whatever its driver.
type appTx struct {
	raw      any
	exec     func(query string, args ...any) error
	count    func(query string, args ...any) int
	commit   func() error
	rollback func() error
}

func wrapCases() []wrapCase {
	fromPgx := func(t *testing.T, tx pgx.Tx) appTx {
		ctx := t.Context()
		return appTx{
			raw: tx,
			exec: func(q string, args ...any) error {
				_, err := tx.Exec(ctx, q, args...)
				return err
			},
			count: func(q string, args ...any) int {
				var n int
				if err := tx.QueryRow(ctx, q, args...).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
			commit:   func() error { return tx.Commit(ctx) },
			rollback: func() error { return tx.Rollback(ctx) },
		}
	}
	return []wrapCase{
		{"pgx.Tx of the store's pool", func(t *testing.T, b *bundle) appTx {
			tx, err := b.store.Pool().Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
			return fromPgx(t, tx)
		}},
		{"pgx.Tx of a connection of the app's", func(t *testing.T, b *bundle) appTx {
			conn, err := pgx.Connect(t.Context(), inSchema(t, b.url, b.schema))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = conn.Close(context.Background()) })
			tx, err := conn.Begin(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			return fromPgx(t, tx)
		}},
		{"*sql.Tx of database/sql", func(t *testing.T, b *bundle) appTx {
			db, err := sql.Open("pgx", inSchema(t, b.url, b.schema))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			ctx := t.Context()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tx.Rollback() })
			return appTx{
				raw: tx,
				exec: func(q string, args ...any) error {
					_, err := tx.ExecContext(ctx, q, args...)
					return err
				},
				count: func(q string, args ...any) int {
					var n int
					if err := tx.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
						t.Fatal(err)
					}
					return n
				},
				commit:   tx.Commit,
				rollback: tx.Rollback,
			}
		}},
	}
}

// TestWrapTx: an app's own transaction, of pgx or of database/sql, carries its rows and hookd's
// together: rolled back, neither stays; committed, both do. hookd's writes and reads through
// the wrapped transaction cover the store's statements: the multi-row ones bind arrays through
// database/sql too.
func TestWrapTx(t *testing.T) {
	t.Parallel()
	for _, wc := range wrapCases() {
		t.Run(wc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := t.Context()
			if _, err := b.store.Pool().Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
				t.Fatal(err)
			}
			existing := hookd.Application{ID: "app_existing", UID: "old", Name: "Old", CreatedAt: time.Now(), UpdatedAt: time.Now()}
			if err := b.store.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertApplication(ctx, &existing) }); err != nil {
				t.Fatal(err)
			}

			write := func(id string, commit bool) {
				t.Helper()
				at := time.Now().UTC().Truncate(time.Microsecond)
				app := hookd.Application{ID: "app_" + id, Name: id, CreatedAt: at, UpdatedAt: at}
				ep := hookd.Endpoint{ID: "ep_" + id, AppID: app.ID, URL: "https://x.example", Channels: []string{"c"}, CreatedAt: at, UpdatedAt: at}
				msg := hookd.Message{ID: "msg_" + id, AppID: app.ID, EventType: "x", Channels: []string{"c", "d"},
					Payload: []byte(`{"id": 1}`), CreatedAt: at}
				d := hookd.Delivery{ID: "dlv_" + id, MessageID: msg.ID, EndpointID: ep.ID, AppID: app.ID,
					Status: hookd.DeliveryPending, CreatedAt: at, UpdatedAt: at}

				atx := wc.begin(t, b)
				if err := atx.exec(`INSERT INTO orders (id) VALUES ($1)`, id); err != nil {
					t.Fatal(err)
				}
				tx, err := b.store.WrapTx(atx.raw)
				if err != nil {
					t.Fatal(err)
				}
				if tx.Raw() != atx.raw {
					t.Fatalf("Raw returned %T, not the transaction wrapped", tx.Raw())
				}
				if ac, ok := tx.(hookd.AfterCommitter); !ok || ac.AfterCommit(func() { t.Error("AfterCommit ran f for a wrapped transaction") }) {
					t.Fatal("a wrapped transaction's AfterCommit reports true")
				}
				// It sees what was committed before and what it wrote itself.
				if _, err := tx.GetApplication(ctx, "old"); err != nil {
					t.Fatal(err)
				}
				if err := tx.InsertApplication(ctx, &app); err != nil {
					t.Fatal(err)
				}
				if err := tx.InsertEndpoint(ctx, &ep, hookd.SigningKey{Secret: "whsec_x", CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
				if _, inserted, err := tx.InsertMessage(ctx, &msg); err != nil || !inserted {
					t.Fatalf("InsertMessage: inserted %t, %v", inserted, err)
				}
				if err := tx.InsertDeliveries(ctx, []hookd.Delivery{d}); err != nil {
					t.Fatal(err)
				}
				next := at.Add(time.Minute)
				err = tx.RecordAttempts(ctx, []hookd.AttemptRecord{{
					Attempt: hookd.Attempt{ID: "atmpt_" + id, DeliveryID: d.ID, MessageID: msg.ID, EndpointID: ep.ID,
						AppID: app.ID, Number: 1, Trigger: hookd.TriggerScheduled, URL: ep.URL, At: at, StatusCode: 500, Error: "HTTP 500"},
					Status: hookd.DeliveryPending, NextAttemptAt: &next,
				}})
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.InsertOperationalEvents(ctx, []hookd.OperationalEvent{{ID: "evt_" + id, Type: "x", At: at}}); err != nil {
					t.Fatal(err)
				}
				got, err := tx.GetDelivery(ctx, d.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Attempts != 1 || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(next) || got.LastError != "HTTP 500" {
					t.Fatalf("delivery after the attempt: %+v", got)
				}
				page, err := tx.ListMessages(ctx, hookd.MessageFilter{AppID: app.ID, Channel: "d"})
				if err != nil || len(page.Data) != 1 {
					t.Fatalf("messages on channel d: %+v, %v", page, err)
				}
				if n := atx.count(`SELECT COUNT(*) FROM hookd_applications WHERE id = $1`, app.ID); n != 1 {
					t.Fatalf("the app's transaction sees %d applications %s, want 1", n, app.ID)
				}
				end := atx.rollback
				if commit {
					end = atx.commit
				}
				if err := end(); err != nil {
					t.Fatal(err)
				}
			}

			write("committed", true)
			write("rolled_back", false)

			if _, err := b.store.GetMessage(ctx, "app_committed", "msg_committed"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.GetAttempt(ctx, "atmpt_committed"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.GetApplication(ctx, "app_rolled_back"); !errors.Is(err, hookd.ErrNotFound) {
				t.Fatalf("rolled back application: %v, want ErrNotFound", err)
			}
			if _, err := b.store.GetDelivery(ctx, "dlv_rolled_back"); !errors.Is(err, hookd.ErrNotFound) {
				t.Fatalf("rolled back delivery: %v, want ErrNotFound", err)
			}
			var orders []string
			rows, err := b.store.Pool().Query(ctx, `SELECT id FROM orders ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			orders, err = pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || len(orders) != 1 || orders[0] != "committed" {
				t.Fatalf("orders %v (%v), want [committed]", orders, err)
			}
		})
	}
}

// TestWrapTxErrors: a failed statement in a wrapped transaction maps like the store's own.
func TestWrapTxErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	for _, wc := range wrapCases() {
		atx := wc.begin(t, b)
		tx, err := b.store.WrapTx(atx.raw)
		if err != nil {
			t.Fatal(err)
		}
		ep := hookd.Endpoint{ID: "ep_orphan", AppID: "app_missing", URL: "https://x.example"}
		if err := tx.InsertEndpoint(ctx, &ep, hookd.SigningKey{Secret: "whsec_x"}); !errors.Is(err, hookd.ErrNotFound) {
			t.Errorf("%s: endpoint of a missing application: %v, want ErrNotFound", wc.name, err)
		}
		_ = atx.rollback()
	}
}

// TestTimesInUTCToTheMicrosecond: times come back in UTC, to the microsecond, whatever the
// session's time zone.
func TestTimesInUTCToTheMicrosecond(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	parsedSchema := freshSchema(t, u)
	s, err := postgres.Open(t.Context(), inSchema(t, u, parsedSchema)+"&timezone=Asia/Kolkata", &postgres.Config{Schema: parsedSchema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", -5*3600))
	app := hookd.Application{ID: "app_1", Name: "x", CreatedAt: at, UpdatedAt: at}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertApplication(ctx, &app) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetApplication(ctx, app.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.Location() != time.UTC || !got.CreatedAt.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("CreatedAt %s, want %s in UTC", got.CreatedAt, at.Truncate(time.Microsecond).UTC())
	}
}

// TestConcurrentRecordAttempts: batches of attempts of shared endpoints, recorded by concurrent
// transactions (two processes' workers), all land, and the endpoints' failure streaks add up.
func TestConcurrentRecordAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	app := hookd.Application{ID: "app_1", Name: "x", CreatedAt: now, UpdatedAt: now}
	eps := make([]hookd.Endpoint, 8)
	const writers, perWriter = 8, 40
	var ds []hookd.Delivery
	err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &app); err != nil {
			return err
		}
		for i := range eps {
			eps[i] = hookd.Endpoint{ID: fmt.Sprintf("ep_%d", i), AppID: app.ID, URL: "https://x.example", CreatedAt: now, UpdatedAt: now}
			if err := tx.InsertEndpoint(ctx, &eps[i], hookd.SigningKey{Secret: "whsec_x", CreatedAt: now}); err != nil {
				return err
			}
		}
		msg := hookd.Message{ID: "msg_1", AppID: app.ID, EventType: "x", Payload: []byte(`{}`), CreatedAt: now}
		if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
			return err
		}
		for i := range writers * perWriter {
			// One message to many endpoints; the attempts below charge them to eps.
			ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_%04d", i), MessageID: msg.ID, EndpointID: fmt.Sprintf("ep_d%04d", i),
				AppID: app.ID, Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now})
		}
		return tx.InsertDeliveries(ctx, ds)
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var recs []hookd.AttemptRecord
			// Each writer walks the endpoints in another order.
			for k := range perWriter {
				i := w*perWriter + k
				ep := eps[(i*7+w)%len(eps)]
				d := ds[i]
				recs = append(recs, hookd.AttemptRecord{
					Attempt: hookd.Attempt{ID: fmt.Sprintf("atmpt_%04d", i), DeliveryID: d.ID, MessageID: d.MessageID,
						EndpointID: ep.ID, AppID: app.ID, Number: 1, Trigger: hookd.TriggerScheduled, URL: ep.URL,
						At: now.Add(time.Duration(i) * time.Millisecond), StatusCode: 503, Error: "HTTP 503"},
					Status: hookd.DeliveryFailed,
				})
			}
			if err := b.store.InTx(ctx, func(tx hookd.Tx) error { return tx.RecordAttempts(ctx, recs) }); err != nil {
				failed.Add(1)
				t.Errorf("writer %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return
	}
	total := 0
	for _, ep := range eps {
		got, err := b.store.GetEndpointByID(ctx, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		total += got.ConsecutiveFailures
		if got.FailingSince == nil || got.LastStatus != 503 {
			t.Errorf("endpoint %s after failures: %+v", ep.ID, got)
		}
	}
	if total != writers*perWriter {
		t.Fatalf("consecutive failures add up to %d, want %d", total, writers*perWriter)
	}
}

// TestAfterCommit: functions given to an InTx transaction's AfterCommit run once it has
// committed (another connection sees its rows), and never when it rolls back.
func TestAfterCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	var seen []error
	err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		app := hookd.Application{ID: "app_1", Name: "x", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := tx.InsertApplication(ctx, &app); err != nil {
			return err
		}
		ac, ok := tx.(hookd.AfterCommitter)
		if !ok {
			t.Fatal("an InTx transaction is not a hookd.AfterCommitter")
		}
		if !ac.AfterCommit(func() {
			_, err := b.store.GetApplication(ctx, "app_1")
			seen = append(seen, err)
		}) {
			t.Fatal("AfterCommit of an InTx transaction reports false")
		}
		if len(seen) != 0 {
			t.Fatal("AfterCommit ran f before the commit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != nil {
		t.Fatalf("after the commit f ran %d times, seeing %v; want once, seeing the application", len(seen), seen)
	}

	errRollback := errors.New("roll back")
	ran := false
	err = b.store.InTx(ctx, func(tx hookd.Tx) error {
		tx.(hookd.AfterCommitter).AfterCommit(func() { ran = true })
		return errRollback
	})
	if !errors.Is(err, errRollback) || ran {
		t.Fatalf("rolled back: InTx returned %v, f ran %t; want the function's error, f not run", err, ran)
	}
}

// riverTables counts River's tables (river_*) in schema.
func riverTables(t *testing.T, pool *pgxpool.Pool, schema string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT COUNT(*) FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'river\_%'`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRiverQueueMigratesRiver: River queues made at once on stores of one new schema apply each
// of River's migrations once, in that schema, and a later Migrate leaves them alone.
func TestRiverQueueMigratesRiver(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	schema := freshSchema(t, u)
	logs := &countingHandler{counts: map[string]int{}}
	logger := slog.New(slog.NewMultiHandler(logs, testLogger(t).Handler()))
	const n = 3
	stores := make([]*postgres.Store, n)
	for i := range n {
		s, err := postgres.Open(t.Context(), u, &postgres.Config{Schema: schema, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	if got := riverTables(t, stores[0].Pool(), schema); got != 0 {
		t.Fatalf("%d river_* tables before a River queue, want 0", got)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() { _, errs[i] = s.NewRiverQueue(t.Context(), nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("NewRiverQueue %d: %v", i, err)
		}
	}
	var rows, versions int
	if err := stores[0].Pool().QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT version) FROM river_migration`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows != versions {
		t.Fatalf("river_migration: %d rows for %d versions", rows, versions)
	}
	if got := logs.count("river migration applied"); got != versions {
		t.Errorf("River migrations applied %d times, want %d (once each)", got, versions)
	}
	if got := riverTables(t, stores[0].Pool(), schema); got < 2 {
		t.Errorf("%d river_* tables in schema %s, want River's", got, schema)
	}
}
