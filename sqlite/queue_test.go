package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/riverqueue"
	"github.com/hookd/hookd/sqlite"
)

// handled collects the jobs a handler was called with.
type handled struct {
	mu   sync.Mutex
	jobs []hookd.Job
	more chan struct{}
}

func newHandled() *handled { return &handled{more: make(chan struct{}, 1000)} }

func (h *handled) handle(_ context.Context, j hookd.Job) error {
	h.mu.Lock()
	h.jobs = append(h.jobs, j)
	h.mu.Unlock()
	h.more <- struct{}{}
	return nil
}

func (h *handled) wait(t *testing.T, n int) []hookd.Job {
	t.Helper()
	for range n {
		select {
		case <-h.more:
		case <-time.After(10 * time.Second):
			h.mu.Lock()
			defer h.mu.Unlock()
			t.Fatalf("handler called %d times, want %d", len(h.jobs), n)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookd.Job(nil), h.jobs...)
}

func newStoreQueue(t *testing.T, s *sqlite.Store) hookd.Queue {
	t.Helper()
	q, err := s.NewQueue(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Stop(ctx)
	})
	return q
}

func jobCount(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM hookd_jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestQueueDeletesWorkedJobs: a worked job leaves no row; one made due again keeps its row.
func TestQueueDeletesWorkedJobs(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "hookd.db"))
	q := newStoreQueue(t, s)
	ctx := t.Context()
	jobs := []hookd.Job{{DeliveryID: "dlv_ok", Attempt: 1}, {DeliveryID: "dlv_snooze", Attempt: 1}}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return q.EnqueueTx(ctx, tx, jobs) }); err != nil {
		t.Fatal(err)
	}
	h := newHandled()
	if err := q.Start(ctx, func(ctx context.Context, j hookd.Job) error {
		_ = h.handle(ctx, j)
		if j.DeliveryID == "dlv_snooze" {
			return hookd.Snooze(time.Hour, "test")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.wait(t, 2)
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := q.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	var id string
	var runAt int64
	if err := s.DB().QueryRowContext(ctx, `SELECT delivery_id, run_at FROM hookd_jobs`).Scan(&id, &runAt); err != nil {
		t.Fatalf("want one job row left: %v (rows: %d)", err, jobCount(t, s.DB()))
	}
	if id != "dlv_snooze" || time.Until(time.UnixMicro(runAt)) < 50*time.Minute {
		t.Errorf("left row %s due %s, want dlv_snooze due in about an hour", id, time.UnixMicro(runAt))
	}
}

// TestQueueOneRunningPerStore: a second queue of the same store does not start beside the first.
func TestQueueOneRunningPerStore(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "hookd.db"))
	q1, q2 := newStoreQueue(t, s), newStoreQueue(t, s)
	h := newHandled()
	if err := q1.Start(t.Context(), h.handle); err != nil {
		t.Fatal(err)
	}
	if err := q2.Start(t.Context(), h.handle); !errors.Is(err, sqlite.ErrQueueRunning) {
		t.Fatalf("second queue's Start: %v, want ErrQueueRunning", err)
	}
	if err := q1.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := q2.Start(t.Context(), h.handle); err != nil {
		t.Fatalf("after the first stopped, the second's Start: %v", err)
	}
}

// TestQueueRestartRunsUnfinishedJobs: a store closed with jobs left (as after a crash) gives them
// to the next process's queue.
func TestQueueRestartRunsUnfinishedJobs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	ctx := t.Context()
	s, err := sqlite.Open(ctx, path, &sqlite.Config{Logger: logcheck.New(t).Logger()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.NewQueue(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := hookd.Job{DeliveryID: "dlv_1", Attempt: 2, Trigger: hookd.TriggerScheduled}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return q.EnqueueTx(ctx, tx, []hookd.Job{want}) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, path)
	h := newHandled()
	if err := newStoreQueue(t, s2).Start(ctx, h.handle); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(t, 1); got[0] != want {
		t.Errorf("got %+v, want %+v", got[0], want)
	}
}

// TestAdoptsRiverJobs: jobs an earlier hookd queued in River's table stay there while the file
// is only open (a River queue may be the client's), and move to hookd_jobs when the store's
// queue starts, lane, attempt, trigger and NotBefore kept, and are worked.
func TestAdoptsRiverJobs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	ctx := t.Context()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	m, err := rivermigrate.New(riversqlite.New(db), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatal(err)
	}
	rq, err := riverqueue.New(riversqlite.New(db), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	nb := time.Now().Add(300 * time.Millisecond).UTC().Truncate(time.Microsecond)
	want := []hookd.Job{
		{DeliveryID: "dlv_first", Attempt: 1, Trigger: hookd.TriggerScheduled},
		{DeliveryID: "dlv_retry", Attempt: 3, Trigger: hookd.TriggerScheduled, NotBefore: nb},
		{DeliveryID: "dlv_manual", Attempt: 4, Trigger: hookd.TriggerManual},
		{DeliveryID: "dlv_done", Attempt: 1, Trigger: hookd.TriggerScheduled},
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rq.EnqueueTx(ctx, rawTx{tx: tx}, want); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE river_job SET state = 'completed', finalized_at = datetime('now') WHERE json_extract(args, '$.d') = 'dlv_done'`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := open(t, path)
	unfinished := func() int {
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE state != 'completed'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n, left := jobCount(t, s.DB()), unfinished(); n != 0 || left != 3 {
		t.Fatalf("after Open: %d rows in hookd_jobs, %d unfinished in river_job; want 0 and 3, until the queue starts", n, left)
	}
	h := newHandled()
	if err := newStoreQueue(t, s).Start(ctx, h.handle); err != nil {
		t.Fatal(err)
	}
	if left := unfinished(); left != 0 {
		t.Errorf("river_job keeps %d unfinished jobs after the move", left)
	}
	got := map[string]hookd.Job{}
	for _, j := range h.wait(t, 3) {
		got[j.DeliveryID] = j
	}
	for _, w := range want[:3] {
		g := got[w.DeliveryID]
		if g.Attempt != w.Attempt || g.Trigger != w.Trigger || !g.NotBefore.Equal(w.NotBefore) || g.Lane() != w.Lane() {
			t.Errorf("job %s came back as %+v, want %+v", w.DeliveryID, g, w)
		}
	}
	if time.Now().Before(nb) {
		t.Errorf("the retry ran before its NotBefore")
	}
}

// rawTx adapts a *sql.Tx for riverqueue's EnqueueTx, which uses only Raw.
type rawTx struct {
	hookd.Tx
	tx *sql.Tx
}

func (r rawTx) Raw() any { return r.tx }

// TestQueueConformance runs the queue conformance suite on the store's own queue, a fresh file
// per subtest. It is not parallel, so that the suite's timing tests run alone.
func TestQueueConformance(t *testing.T) {
	timing := 1.0
	if raceEnabled {
		timing = 10 // the race detector slows modernc's SQLite several times over
	}
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: logcheck.New(t).Logger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			q, err := s.NewQueue(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return q, s.InTx
		},
		Timing: timing,
	})
}
