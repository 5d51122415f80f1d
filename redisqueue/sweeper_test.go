package redisqueue_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
)

// sweepBundle is a store with an application and three endpoints, and a queue on it.
type sweepBundle struct {
	ctx   context.Context
	store *sqlite.Store
	q     *redisqueue.Queue
	app   *hookd.Application
	eps   []*hookd.Endpoint
}

func setupSweep(t *testing.T, u string, cfg *redisqueue.Config) *sweepBundle {
	t.Helper()
	ctx := t.Context()
	store := openStore(t)
	q := newQueue(t, u, store, nil, cfg)
	// The client only creates the application and endpoints; it is never started.
	c, err := hookd.NewClient(store, &hookd.Config{Queue: q})
	if err != nil {
		t.Fatalf("hookd.NewClient: %v", err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatalf("CreateApplication: %v", err)
	}
	b := &sweepBundle{ctx: ctx, store: store, q: q, app: app}
	for i := range 3 {
		ep, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: fmt.Sprintf("https://acme.example/hooks/%d", i)})
		if err != nil {
			t.Fatalf("CreateEndpoint: %v", err)
		}
		b.eps = append(b.eps, ep)
	}
	return b
}

// writeDeliveries writes, in one transaction, a message and one pending delivery per endpoint,
// created at created with attempts made and the next attempt due at next (nil: none), and
// enqueues their jobs through via in the same transaction when via is not nil. Without them it is
// the state a process leaves when it dies between the commit and the enqueue.
func (b *sweepBundle) writeDeliveries(t *testing.T, created time.Time, attempts int, next *time.Time, via hookd.Queue) []hookd.Delivery {
	t.Helper()
	m := &hookd.Message{
		ID: fmt.Sprintf("msg_%s_%d", t.Name(), created.UnixNano()), AppID: b.app.ID,
		EventType: "invoice.paid", Payload: []byte(`{"invoice":"in_1"}`), CreatedAt: created,
	}
	var ds []hookd.Delivery
	for i, ep := range b.eps {
		ds = append(ds, hookd.Delivery{
			ID: fmt.Sprintf("dlv_%d_%d", created.UnixNano(), i), MessageID: m.ID, EndpointID: ep.ID, AppID: b.app.ID,
			Status: hookd.DeliveryPending, Attempts: attempts, NextAttemptAt: next, CreatedAt: created, UpdatedAt: created,
		})
	}
	err := b.store.InTx(b.ctx, func(tx hookd.Tx) error {
		if _, _, err := tx.InsertMessage(b.ctx, m); err != nil {
			return err
		}
		if err := tx.InsertDeliveries(b.ctx, ds); err != nil {
			return err
		}
		if via == nil {
			return nil
		}
		jobs := make([]hookd.Job, len(ds))
		for i, d := range ds {
			jobs[i] = hookd.Job{DeliveryID: d.ID, Attempt: attempts + 1, Trigger: hookd.TriggerScheduled}
			if next != nil {
				jobs[i].NotBefore = *next
			}
		}
		return via.EnqueueTx(b.ctx, tx, jobs)
	})
	if err != nil {
		t.Fatalf("write deliveries: %v", err)
	}
	return ds
}

// deliver is a handler that works a job as hookd's worker does: a job whose delivery is no
// longer pending, or whose attempt was made, is dropped (a sweep that read the delivery just
// before it was delivered may enqueue its job again); any other marks the delivery delivered and
// is recorded in rec.
func (b *sweepBundle) deliver(rec *queuetest.Recorder) hookd.JobHandler {
	return func(ctx context.Context, job hookd.Job) error {
		return b.store.InTx(ctx, func(tx hookd.Tx) error {
			d, err := tx.GetDelivery(ctx, job.DeliveryID)
			if err != nil || d.Status != hookd.DeliveryPending || job.Attempt != d.Attempts+1 {
				return err
			}
			_ = rec.Handle(ctx, job)
			return tx.SetDeliveryStatus(ctx, job.DeliveryID, hookd.DeliveryDelivered, nil, "", time.Now())
		})
	}
}

// sweep runs one sweep and fails the test unless it enqueued want jobs.
func (b *sweepBundle) sweep(t *testing.T, what string, want int) {
	t.Helper()
	n, err := b.q.Sweep(b.ctx)
	if err != nil {
		t.Fatalf("%s: Sweep: %v", what, err)
	}
	if n != want {
		t.Errorf("%s: Sweep enqueued %d jobs, want %d", what, n, want)
	}
}

// checkOnce fails the test unless calls are exactly one per delivery of ds, each with the job the
// sweeper makes of it.
func checkOnce(t *testing.T, calls []queuetest.Call, ds []hookd.Delivery) {
	t.Helper()
	n := perDelivery(calls)
	if len(n) != len(ds) {
		t.Errorf("handler called for %d deliveries, want %d: %v", len(n), len(ds), n)
	}
	byID := map[string]hookd.Delivery{}
	for _, d := range ds {
		byID[d.ID] = d
		if n[d.ID] != 1 {
			t.Errorf("handler called %d times for %s, want once", n[d.ID], d.ID)
		}
	}
	for _, c := range calls {
		d, ok := byID[c.Job.DeliveryID]
		if !ok {
			continue
		}
		want := hookd.Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: hookd.TriggerScheduled}
		if d.NextAttemptAt != nil {
			want.NotBefore = *d.NextAttemptAt
		}
		if c.Job.DeliveryID != want.DeliveryID || c.Job.Attempt != want.Attempt || c.Job.Trigger != want.Trigger ||
			!c.Job.NotBefore.Truncate(time.Microsecond).Equal(want.NotBefore.Truncate(time.Microsecond)) {
			t.Errorf("handler got %+v, want %+v", c.Job, want)
		}
	}
}

// TestSweepEnqueuesDeliveriesWithoutJob is seed 003's sweeper test: deliveries committed without
// their jobs (the process died between the commit and the enqueue) are enqueued by Sweep and
// worked once each; a second Sweep, while their jobs wait and after they are delivered, enqueues
// nothing.
func TestSweepEnqueuesDeliveriesWithoutJob(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, redisURL(t), nil)
	created := time.Now().Add(-2 * time.Minute)
	first := b.writeDeliveries(t, created, 0, &created, nil)
	// A delivery whose first attempt failed and whose retry was due 90 s ago, its retry job lost.
	retryAt := time.Now().Add(-90 * time.Second)
	retries := b.writeDeliveries(t, created.Add(time.Millisecond), 1, &retryAt, nil)
	// Due too recently for the sweeper: its enqueue may still be on its way.
	fresh := time.Now().Add(-10 * time.Second)
	b.writeDeliveries(t, fresh, 0, &fresh, nil)
	stranded := append(first, retries...)

	b.sweep(t, "first sweep", len(stranded))
	b.sweep(t, "second sweep, with the jobs waiting", 0)

	rec := queuetest.NewRecorder(nil)
	start(t, b.q, b.deliver(rec))
	rec.Wait(t, len(stranded), 10*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	checkOnce(t, calls, stranded)
	b.sweep(t, "sweep after the deliveries were delivered", 0)
}

// TestSweepRestoresJobsAfterRedisFlush: Redis restarts empty (FLUSHDB, on a database of this
// test's own) after jobs were enqueued and before they ran; Sweep enqueues them again and each
// runs once.
func TestSweepRestoresJobsAfterRedisFlush(t *testing.T) {
	t.Parallel()
	u := withDB(t, redisURL(t), 15)
	b := setupSweep(t, u, nil)
	created := time.Now().Add(-2 * time.Minute)
	ds := b.writeDeliveries(t, created, 0, &created, b.q)

	rc := redisClient(t, u)
	pending := "asynq:{" + redisqueue.QueueName(b.q.Namespace(), hookd.LaneFirst) + "}:pending"
	if n, err := rc.LLen(b.ctx, pending).Result(); err != nil || n != int64(len(ds)) {
		t.Fatalf("%s holds %d tasks (%v), want %d: the jobs were not enqueued after the commit", pending, n, err, len(ds))
	}
	if err := rc.FlushDB(b.ctx).Err(); err != nil {
		t.Fatalf("FLUSHDB: %v", err)
	}

	b.sweep(t, "sweep after FLUSHDB", len(ds))
	rec := queuetest.NewRecorder(nil)
	start(t, b.q, b.deliver(rec))
	rec.Wait(t, len(ds), 10*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	checkOnce(t, calls, ds)
}

// TestSweeperRunsAtStartAndOnItsInterval: the sweeper of a started queue enqueues a delivery
// committed without its job, at Start and then every SweepInterval, with no Sweep call.
func TestSweeperRunsAtStartAndOnItsInterval(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, redisURL(t), &redisqueue.Config{SweepInterval: 100 * time.Millisecond, SweepAfter: 50 * time.Millisecond})
	created := time.Now().Add(-time.Second)
	atStart := b.writeDeliveries(t, created, 0, &created, nil)
	rec := queuetest.NewRecorder(nil)
	start(t, b.q, b.deliver(rec))
	rec.Wait(t, len(atStart), 5*time.Second)

	now := time.Now()
	later := b.writeDeliveries(t, now, 0, &now, nil)
	rec.Wait(t, len(atStart)+len(later), 5*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	checkOnce(t, calls, append(atStart, later...))
}

// TestOverlappingSweepsEnqueueEachJobOnce: the sweepers of two processes (two queues in one
// namespace) run at once, several times; together they enqueue each stranded delivery's job
// once, and it runs once.
func TestOverlappingSweepsEnqueueEachJobOnce(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	b := setupSweep(t, u, nil)
	other := newQueue(t, u, b.store, nil, &redisqueue.Config{Namespace: b.q.Namespace()})
	var ds []hookd.Delivery
	for i := range 10 {
		created := time.Now().Add(-2*time.Minute + time.Duration(i)*time.Millisecond)
		ds = append(ds, b.writeDeliveries(t, created, 0, &created, nil)...)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for _, q := range []*redisqueue.Queue{b.q, other, b.q, other} {
		wg.Go(func() {
			n, err := q.Sweep(b.ctx)
			if err != nil {
				t.Errorf("Sweep: %v", err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != len(ds) {
		t.Errorf("the overlapping sweeps enqueued %d jobs in all, want %d", total, len(ds))
	}
	rec := queuetest.NewRecorder(nil)
	start(t, other, b.deliver(rec))
	rec.Wait(t, len(ds), 10*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	checkOnce(t, calls, ds)
}

// TestEnqueueFailureAfterCommitIsLeftToSweeper: Redis does not answer when a transaction's jobs
// are enqueued after its commit; the commit stands, the failure is logged at Warn, and the
// sweeper of a queue that reaches Redis enqueues the jobs.
func TestEnqueueFailureAfterCommitIsLeftToSweeper(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, redisURL(t), nil)
	var logged bytes.Buffer
	var mu sync.Mutex
	down, err := redisqueue.New("redis://127.0.0.1:1/0?dial_timeout=100ms", b.store, nil, &redisqueue.Config{
		Namespace: b.q.Namespace(),
		Logger: slog.New(slog.NewMultiHandler(testLogger(t).Handler(),
			slog.NewTextHandler(lockedWriter{&mu, &logged}, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer down.Close()

	created := time.Now().Add(-2 * time.Minute)
	ds := b.writeDeliveries(t, created, 0, &created, down) // fails the test if the transaction fails
	mu.Lock()
	log := logged.String()
	mu.Unlock()
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "the sweeper will enqueue them") {
		t.Errorf("the failed enqueue was not logged at Warn; log: %q", log)
	}

	b.sweep(t, "sweep after the failed enqueue", len(ds))
	rec := queuetest.NewRecorder(nil)
	start(t, b.q, b.deliver(rec))
	rec.Wait(t, len(ds), 10*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	checkOnce(t, calls, ds)
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestSweeperLogsWhatItEnqueued: the sweep a started queue runs at Start, which enqueues stranded
// deliveries' jobs, logs one line at Warn with how many: a delivery without a job is a fault (a
// lost enqueue, a crash, Redis emptied).
func TestSweeperLogsWhatItEnqueued(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewMultiHandler(testLogger(t).Handler(),
		slog.NewTextHandler(lockedWriter{&mu, &logged}, &slog.HandlerOptions{Level: slog.LevelInfo})))
	b := setupSweep(t, redisURL(t), &redisqueue.Config{SweepInterval: time.Hour, SweepAfter: 10 * time.Millisecond, Logger: logger})
	created := time.Now().Add(-time.Second)
	ds := b.writeDeliveries(t, created, 0, &created, nil)
	rec := queuetest.NewRecorder(nil)
	start(t, b.q, b.deliver(rec))
	rec.Wait(t, len(ds), 5*time.Second)
	time.Sleep(settle)

	mu.Lock()
	log := logged.String()
	mu.Unlock()
	var sweeps []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "hookd sweep") {
			sweeps = append(sweeps, line)
		}
	}
	want := fmt.Sprintf("enqueued=%d", len(ds))
	if len(sweeps) != 1 || !strings.Contains(sweeps[0], "level=WARN") || !strings.Contains(sweeps[0], want) {
		t.Errorf("sweep lines = %q, want one at WARN with %s", sweeps, want)
	}
}

// TestSweepLeavesParkedDeliveriesWaiting: a parked delivery (pending, no next attempt time,
// behind an earlier one to its ordered endpoint) is not enqueued while an earlier delivery is
// pending, so a sweep costs no job for the deliveries that wait; one that has become its
// endpoint's head, its advance's enqueue lost, is enqueued.
func TestSweepLeavesParkedDeliveriesWaiting(t *testing.T) {
	t.Parallel()
	b := setupSweep(t, redisURL(t), nil)
	created := time.Now().Add(-3 * time.Minute)
	heads := b.writeDeliveries(t, created, 0, &created, nil)
	next := b.writeDeliveries(t, created.Add(time.Millisecond), 0, nil, nil)
	b.writeDeliveries(t, created.Add(2*time.Millisecond), 0, nil, nil)

	b.sweep(t, "sweep with two parked deliveries behind each head", len(heads))
	err := b.store.InTx(b.ctx, func(tx hookd.Tx) error {
		for _, d := range heads {
			if err := tx.SetDeliveryStatus(b.ctx, d.ID, hookd.DeliveryDelivered, nil, "", time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b.sweep(t, "sweep once the heads were delivered: the next ones are heads, parked", len(next))
	b.sweep(t, "sweep again, their jobs waiting", 0)
}
