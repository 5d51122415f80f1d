package riverqueue_test

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/riverqueue"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite"
)

// openDB opens the SQLite file at path as the sqlite store does: WAL, immediate transactions,
// one connection. It is closed when the test ends.
func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate")
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// bundle is what setup gives a test: a migrated SQLite file and a handler that records calls.
type bundle struct {
	path string
	db   *sql.DB
	rec  *queuetest.Recorder
}

// setup creates a SQLite file in a temporary directory and runs River's migrations on it.
func setup(t testing.TB) *bundle {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookd.db")
	db := openDB(t, path)
	m, err := rivermigrate.New(riversqlite.New(db), nil)
	if err != nil {
		t.Fatalf("rivermigrate.New: %v", err)
	}
	if _, err := m.Migrate(context.Background(), rivermigrate.DirectionUp, nil); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return &bundle{path: path, db: db, rec: queuetest.NewRecorder(nil)}
}

// newQueue builds a queue on db and stops it when the test ends.
func newQueue(t testing.TB, db *sql.DB, cfg *riverqueue.Config) *riverqueue.Queue[*sql.Tx] {
	t.Helper()
	q, err := riverqueue.New(riversqlite.New(db), nil, testLogger(t), cfg)
	if err != nil {
		t.Fatalf("riverqueue.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return q
}

// start starts q with h.
func start(t testing.TB, q *riverqueue.Queue[*sql.Tx], h hookd.JobHandler) {
	t.Helper()
	if err := q.Start(context.Background(), h); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// testLogger shows warnings and errors in the test's output, and records every line, Debug
// included, to be checked for secrets when the test ends (call it before what it logs for starts).
func testLogger(t testing.TB) *slog.Logger {
	return logcheck.New(t).LoggerTo(t.Output(), slog.LevelWarn)
}

// sqlTx adapts an application's *sql.Tx to hookd.Tx for EnqueueTx, which uses only Raw. Any
// other method would panic on the nil embedded interface.
type sqlTx struct {
	hookd.Tx
	tx *sql.Tx
}

func (s sqlTx) Raw() any { return s.tx }

// enqueue inserts jobs in a transaction of its own and commits it.
func enqueue(t testing.TB, db *sql.DB, q hookd.Queue, jobs ...hookd.Job) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if err := q.EnqueueTx(ctx, sqlTx{tx: tx}, jobs); err != nil {
		_ = tx.Rollback()
		t.Fatalf("EnqueueTx: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// jobRow is a row of river_job, as far as the tests look.
type jobRow struct {
	deliveryID string
	queue      string
	state      string
	attempt    int
}

// jobRows reads river_job. Call it without a transaction open on db.
func jobRows(t testing.TB, db *sql.DB) []jobRow {
	t.Helper()
	rows, err := db.Query(`SELECT json_extract(args, '$.d'), queue, state, attempt FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatalf("query river_job: %v", err)
	}
	defer rows.Close()
	var out []jobRow
	for rows.Next() {
		var r jobRow
		if err := rows.Scan(&r.deliveryID, &r.queue, &r.state, &r.attempt); err != nil {
			t.Fatalf("scan river_job: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read river_job: %v", err)
	}
	return out
}

// waitState waits until every row of river_job is in state, failing after timeout.
func waitState(t testing.TB, db *sql.DB, state string, timeout time.Duration) []jobRow {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		rows := jobRows(t, db)
		done := len(rows) > 0
		for _, r := range rows {
			done = done && r.state == state
		}
		if done {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("river_job after %s: %+v, want all %s", timeout, rows, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
