package riverqueue_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/riverqueue"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

func TestEnqueueTxCommittedIsWorkedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	start(t, q, b.rec.Handle)

	want := hookd.Job{DeliveryID: "dlv_1", Attempt: 1, Trigger: hookd.TriggerScheduled}
	enqueue(t, b.db, q, want)

	calls := b.rec.Wait(t, 1, 5*time.Second)
	if calls[0].Job != want {
		t.Errorf("handler got %+v, want %+v", calls[0].Job, want)
	}
	waitState(t, b.db, "completed", 5*time.Second)
	if calls, _ := b.rec.Snapshot(); len(calls) != 1 {
		t.Errorf("handler called %d times, want 1", len(calls))
	}
}

func TestEnqueueTxRolledBackIsNeverWorked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	start(t, q, b.rec.Handle)

	ctx := context.Background()
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.EnqueueTx(ctx, sqlTx{tx: tx}, []hookd.Job{{DeliveryID: "dlv_1", Attempt: 1}}); err != nil {
		t.Fatalf("EnqueueTx: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	time.Sleep(500 * time.Millisecond)
	if calls, _ := b.rec.Snapshot(); len(calls) != 0 {
		t.Errorf("handler called %d times for a rolled-back job", len(calls))
	}
	if rows := jobRows(t, b.db); len(rows) != 0 {
		t.Errorf("river_job has %+v after rollback", rows)
	}
}

func TestEnqueueTxBeforeStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 1})
	start(t, q, b.rec.Handle)
	b.rec.Wait(t, 1, 5*time.Second)
}

func TestEnqueueTxUnsupportedTx(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	jobs := []hookd.Job{{DeliveryID: "dlv_1", Attempt: 1}}
	for name, tx := range map[string]hookd.Tx{
		"nil":    nil,
		"string": otherTx{raw: "not a tx"},
		"nil*DB": otherTx{raw: (*sql.DB)(nil)},
	} {
		if err := q.EnqueueTx(context.Background(), tx, jobs); !errors.Is(err, hookd.ErrUnsupportedTx) {
			t.Errorf("%s: EnqueueTx error %v, want ErrUnsupportedTx", name, err)
		}
	}
}

func TestEnqueueTxEmptyDeliveryID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	tx, err := b.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	err = q.EnqueueTx(context.Background(), sqlTx{tx: tx}, []hookd.Job{{Attempt: 1}})
	if !errors.Is(err, hookd.ErrInvalid) {
		t.Errorf("EnqueueTx error %v, want ErrInvalid", err)
	}
}

// otherTx is a hookd.Tx whose Raw is not a *sql.Tx.
type otherTx struct {
	hookd.Tx
	raw any
}

func (o otherTx) Raw() any { return o.raw }

func TestLanes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	enqueue(t, b.db, q,
		hookd.Job{DeliveryID: "first", Attempt: 1, Trigger: hookd.TriggerScheduled},
		hookd.Job{DeliveryID: "retry", Attempt: 3, Trigger: hookd.TriggerScheduled},
		hookd.Job{DeliveryID: "manual", Attempt: 4, Trigger: hookd.TriggerManual},
	)
	want := map[string]string{"first": "hookd_first", "retry": "hookd_retry", "manual": "hookd_manual"}
	rows := jobRows(t, b.db)
	if len(rows) != len(want) {
		t.Fatalf("river_job has %d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		if r.queue != want[r.deliveryID] {
			t.Errorf("job %s in queue %q, want %q", r.deliveryID, r.queue, want[r.deliveryID])
		}
		if r.state != "available" {
			t.Errorf("job %s is %s, want available", r.deliveryID, r.state)
		}
	}
}

// TestNotBeforeNear checks the correctness bound on a job due soon: called at or after
// NotBefore, and within 100 ms of it, in the first lane (100 ms poll) and the retry lane (20 ms),
// for jobs due in 200 ms (held in the worker slot) and in 1.2 s (snoozed first).
func TestNotBeforeNear(t *testing.T) {
	// Not parallel: the bound is on timing, so the test runs alone.
	b := setup(t)
	q := newQueue(t, b.db, nil)
	start(t, q, b.rec.Handle)
	// Measure a running queue, not River's start-up.
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "warm-up", Attempt: 1}, hookd.Job{DeliveryID: "warm-up", Attempt: 2})
	b.rec.Wait(t, 2, 5*time.Second)
	b.rec.Reset()

	now := time.Now()
	want := map[string]time.Time{}
	var jobs []hookd.Job
	for i := range 12 {
		nb := now.Add(200 * time.Millisecond)
		if i >= 8 {
			nb = now.Add(1200 * time.Millisecond)
		}
		j := hookd.Job{DeliveryID: fmt.Sprintf("dlv_%d", i), Attempt: 1 + i%2, NotBefore: nb}
		jobs = append(jobs, j)
		want[j.DeliveryID] = nb
	}
	enqueue(t, b.db, q, jobs...)

	for _, c := range b.rec.Wait(t, len(jobs), 5*time.Second) {
		late := c.At.Sub(c.Job.NotBefore)
		t.Logf("%s (%s lane, due in %s): %s after NotBefore", c.Job.DeliveryID, c.Job.Lane(),
			c.Job.NotBefore.Sub(now).Round(time.Millisecond), late)
		if late < 0 || late > lateBound(100*time.Millisecond) {
			t.Errorf("%s called %s after NotBefore, want within [0, %s]", c.Job.DeliveryID, late, lateBound(100*time.Millisecond))
		}
		if nb := want[c.Job.DeliveryID]; !c.Job.NotBefore.Equal(nb.Truncate(time.Microsecond)) {
			t.Errorf("%s NotBefore %s, want %s", c.Job.DeliveryID, c.Job.NotBefore, nb)
		}
	}
}

// lateBound returns d, or 1 s when the race detector slows SQLite down. The lower bound (never
// before NotBefore) is checked as is.
func lateBound(d time.Duration) time.Duration {
	if raceEnabled {
		return max(d, time.Second)
	}
	return d
}

// TestNotBeforeFar checks a job due beyond River's 5 s scheduler interval: inserted scheduled,
// never called before NotBefore.
func TestNotBeforeFar(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 8 s")
	}
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	start(t, q, b.rec.Handle)

	// Due 8 s out, the job is scheduled for 3 s out: River's scheduler must not have made it
	// available before the check below reads it, even on a machine slowed by the race detector
	// (with 6 s, a one-second stall between the insert and the read made it fail).
	notBefore := time.Now().Add(8 * time.Second)
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 2, NotBefore: notBefore})
	if rows := jobRows(t, b.db); rows[0].state != "scheduled" {
		t.Errorf("job inserted %s, want scheduled", rows[0].state)
	}

	c := b.rec.Wait(t, 1, 12*time.Second)[0]
	late := c.At.Sub(notBefore)
	t.Logf("called %s after NotBefore", late)
	if late < 0 {
		t.Errorf("called %s before NotBefore", -late)
	}
	if late > time.Second { // not a bound of the design, a sign that something broke
		t.Errorf("called %s after NotBefore", late)
	}
}

func TestSnoozeUsesNoAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := queuetest.NewRecorder(func(_ context.Context, _ hookd.Job, n int) error {
		if n == 1 {
			return hookd.Snooze(150*time.Millisecond, "endpoint busy")
		}
		return nil
	})
	q := newQueue(t, b.db, nil)
	start(t, q, rec.Handle)
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 2})

	calls := rec.Wait(t, 2, 5*time.Second)
	if gap := calls[1].At.Sub(calls[0].At); gap < 150*time.Millisecond {
		t.Errorf("second call %s after the first, want at least 150ms", gap)
	}
	rows := waitState(t, b.db, "completed", 5*time.Second)
	if rows[0].attempt != 1 {
		t.Errorf("River attempt %d after a snooze and a success, want 1", rows[0].attempt)
	}
}

func TestErrorIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	errLocked := errors.New("database is locked")
	rec := queuetest.NewRecorder(func(_ context.Context, _ hookd.Job, n int) error {
		if n == 1 {
			return errLocked
		}
		return nil
	})
	q := newQueue(t, b.db, nil)
	start(t, q, rec.Handle)
	want := hookd.Job{DeliveryID: "dlv_1", Attempt: 1, Trigger: hookd.TriggerScheduled}
	enqueue(t, b.db, q, want)

	calls := rec.Wait(t, 2, 5*time.Second)
	if calls[1].Job != want {
		t.Errorf("retry got %+v, want %+v", calls[1].Job, want)
	}
	// The first retry comes after 1 s; allow for River's completer and the lane's poll.
	if gap := calls[1].At.Sub(calls[0].At); gap < time.Second || gap > time.Second+lateBound(500*time.Millisecond) {
		t.Errorf("retry %s after the failure, want about 1s", gap)
	}
	waitState(t, b.db, "completed", 5*time.Second)
}

func TestStopDrainsJobInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	finished := make(chan struct{})
	rec := queuetest.NewRecorder(func(context.Context, hookd.Job, int) error {
		time.Sleep(300 * time.Millisecond)
		close(finished)
		return nil
	})
	q := newQueue(t, b.db, nil)
	start(t, q, rec.Handle)
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 1})
	rec.Wait(t, 1, 5*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-finished:
	default:
		t.Fatal("Stop returned before the job in flight finished")
	}
	if rows := jobRows(t, b.db); rows[0].state != "completed" {
		t.Errorf("job %s after Stop, want completed", rows[0].state)
	}
}

func TestStopShortContextCancelsAndJobRunsAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	returned := make(chan struct{})
	rec := queuetest.NewRecorder(func(ctx context.Context, _ hookd.Job, _ int) error {
		defer close(returned)
		<-ctx.Done()
		return fmt.Errorf("post: %w", ctx.Err())
	})
	q := newQueue(t, b.db, nil)
	start(t, q, rec.Handle)
	job := hookd.Job{DeliveryID: "dlv_1", Attempt: 1, Trigger: hookd.TriggerScheduled}
	enqueue(t, b.db, q, job)
	rec.Wait(t, 1, 5*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := q.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop error %v, want DeadlineExceeded", err)
	}
	t.Logf("Stop returned after %s", time.Since(began))
	select {
	case <-returned:
	default:
		t.Error("Stop returned while the cancelled handler was still running")
	}
	time.Sleep(300 * time.Millisecond)
	if calls, _ := rec.Snapshot(); len(calls) != 1 {
		t.Errorf("handler called %d times, want 1 (none after Stop)", len(calls))
	}
	rows := jobRows(t, b.db)
	if rows[0].state != "available" || rows[0].attempt != 0 {
		t.Errorf("interrupted job %s, attempt %d; want available, attempt 0", rows[0].state, rows[0].attempt)
	}

	// A new queue on the same file, as after a restart, works the job again.
	db2 := openDB(t, b.path)
	rec2 := queuetest.NewRecorder(nil)
	q2 := newQueue(t, db2, nil)
	start(t, q2, rec2.Handle)
	if got := rec2.Wait(t, 1, 5*time.Second)[0].Job; got != job {
		t.Errorf("restarted queue got %+v, want %+v", got, job)
	}
}

func TestStartTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	start(t, q, b.rec.Handle)
	if err := q.Start(context.Background(), b.rec.Handle); !errors.Is(err, riverqueue.ErrAlreadyStarted) {
		t.Errorf("second Start: %v, want ErrAlreadyStarted", err)
	}
	if err := q.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Started again after Stop, it works jobs.
	start(t, q, b.rec.Handle)
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 1})
	b.rec.Wait(t, 1, 5*time.Second)
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	b := setup(t)
	driver := riversqlite.New(b.db)
	for name, tc := range map[string]struct {
		qcfg *hookd.QueueConfig
		cfg  []*riverqueue.Config
	}{
		"negative cooldown":   {cfg: []*riverqueue.Config{{FetchCooldown: -1}}},
		"poll below cooldown": {cfg: []*riverqueue.Config{{FetchCooldown: 50 * time.Millisecond, FirstPollInterval: 10 * time.Millisecond}}},
		"two configs":         {cfg: []*riverqueue.Config{nil, nil}},
		"unknown lane":        {qcfg: &hookd.QueueConfig{Workers: map[hookd.Lane]int{"fast": 3}}},
		"negative workers":    {qcfg: &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneRetry: -1}}},
		"too many workers":    {qcfg: &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: 10_001}}},
		"negative timeout":    {qcfg: &hookd.QueueConfig{JobTimeout: -time.Second}},
	} {
		if _, err := riverqueue.New(driver, tc.qcfg, nil, tc.cfg...); !errors.Is(err, hookd.ErrInvalid) {
			t.Errorf("%s: New error %v, want ErrInvalid", name, err)
		}
	}
	if _, err := riverqueue.New(driver, &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneManual: 2}}, nil); err != nil {
		t.Errorf("New with valid config: %v", err)
	}
}
