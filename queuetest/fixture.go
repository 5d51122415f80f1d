package queuetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

const (
	// callWait is how long the suite waits for a handler call that should come promptly.
	callWait = 5 * time.Second
	// settle is how long the suite watches for a call that must not come.
	settle = 500 * time.Millisecond
	// stopWait bounds the suite's Stop at a test's end.
	stopWait = 10 * time.Second
)

// fixture is one test's queue and the helpers that drive it.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	queue  hookd.Queue
	inTx   func(ctx context.Context, fn func(hookd.Tx) error) error
	timing float64
}

// newFixture builds the test's queue with h and stops it when the test ends, before the
// harness's cleanups run.
func newFixture(t *testing.T, h Harness, cfg *hookd.QueueConfig) *fixture {
	t.Helper()
	q, inTx := h.New(t, cfg)
	if q == nil || inTx == nil {
		t.Fatal("queuetest: Harness.New returned a nil queue or InTx")
	}
	f := &fixture{t: t, ctx: t.Context(), queue: q, inTx: inTx, timing: h.Timing}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), f.scale(stopWait))
		defer cancel()
		_ = q.Stop(ctx)
	})
	return f
}

// scale returns d multiplied by the harness's Timing.
func (f *fixture) scale(d time.Duration) time.Duration { return scale(d, f.timing) }

// start starts the queue with h and fails the test on an error. The queue lives until Stop: the
// context given to Start never ends.
func (f *fixture) start(h hookd.JobHandler) {
	f.t.Helper()
	if err := f.queue.Start(context.Background(), h); err != nil {
		f.t.Fatalf("Start: %v", err)
	}
}

// stop calls Stop with ctx and returns its error, failing the test when Stop does not return
// within 20 s (times Timing).
func (f *fixture) stop(ctx context.Context) error {
	f.t.Helper()
	done := make(chan error, 1)
	go func() { done <- f.queue.Stop(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(f.scale(2 * stopWait)):
		f.t.Fatalf("Stop did not return in %s", f.scale(2*stopWait))
		return nil
	}
}

// enqueue inserts jobs in a transaction of their own, committed, and fails the test on an error.
func (f *fixture) enqueue(jobs ...hookd.Job) {
	f.t.Helper()
	err := f.inTx(f.ctx, func(tx hookd.Tx) error { return f.queue.EnqueueTx(f.ctx, tx, jobs) })
	if err != nil {
		f.t.Fatalf("enqueue %d jobs: %v", len(jobs), err)
	}
}

// quiet waits settle (times Timing), for calls that must not come.
func (f *fixture) quiet() { time.Sleep(f.scale(settle)) }

// foreignTx is a hookd.Tx whose Raw is not a backend's transaction. Its other methods panic (nil
// embedded interface).
type foreignTx struct {
	hookd.Tx
	raw any
}

func (o foreignTx) Raw() any { return o.raw }

// zone is deliberately not UTC, and past has 321 ns past the microsecond, so that a backend that
// keeps, truncates or rounds to the microsecond all give back the same instant.
var (
	zone = time.FixedZone("UTC+1", 3600)
	past = time.Date(2026, 3, 1, 12, 0, 0, 123456321, zone)
)

// sameJob reports whether got is want as a queue carries it: NotBefore the same instant to the
// microsecond, every other field equal.
func sameJob(want, got hookd.Job) bool {
	return got.DeliveryID == want.DeliveryID && got.Attempt == want.Attempt && got.Trigger == want.Trigger &&
		got.NotBefore.Truncate(time.Microsecond).Equal(want.NotBefore.Truncate(time.Microsecond))
}

// showJob formats a job for a failure message.
func showJob(j hookd.Job) string {
	nb := "zero"
	if !j.NotBefore.IsZero() {
		nb = j.NotBefore.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("{DeliveryID:%q Attempt:%d Trigger:%q NotBefore:%s}", j.DeliveryID, j.Attempt, j.Trigger, nb)
}

// Jobs in each lane, as a test builds them.
func firstJob(id string) hookd.Job {
	return hookd.Job{DeliveryID: id, Attempt: 1, Trigger: hookd.TriggerScheduled}
}

func retryJob(id string) hookd.Job {
	return hookd.Job{DeliveryID: id, Attempt: 2, Trigger: hookd.TriggerScheduled}
}

func manualJob(id string) hookd.Job {
	return hookd.Job{DeliveryID: id, Attempt: 3, Trigger: hookd.TriggerManual}
}

// laneJobs builds a job in each lane.
var laneJobs = map[hookd.Lane]func(id string) hookd.Job{
	hookd.LaneFirst: firstJob, hookd.LaneRetry: retryJob, hookd.LaneManual: manualJob,
}

var lanes = []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual}

// gate holds handlers until it opens. It opens when the test ends, before the queue is stopped,
// so that no handler outlives the test.
type gate struct {
	ch   chan struct{}
	once sync.Once
}

func (f *fixture) newGate() *gate {
	g := &gate{ch: make(chan struct{})}
	f.t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until g opens, or returns ctx's error when ctx ends first.
func (g *gate) wait(ctx context.Context) error {
	select {
	case <-g.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Call is one call of a Recorder's handler.
type Call struct {
	Job hookd.Job
	At  time.Time
}

// Recorder is a JobHandler (Handle) that records its calls and answers with fn (nil: always
// nil). Queue tests outside this package use it too.
type Recorder struct {
	fn func(ctx context.Context, job hookd.Job, n int) error

	mu    sync.Mutex
	calls []Call
	wake  chan struct{} // closed and replaced at every call
}

// NewRecorder returns a Recorder answering with fn; n given to fn counts calls for the job's
// delivery, from 1.
func NewRecorder(fn func(ctx context.Context, job hookd.Job, n int) error) *Recorder {
	return &Recorder{fn: fn, wake: make(chan struct{})}
}

// Handle is the hookd.JobHandler.
func (r *Recorder) Handle(ctx context.Context, job hookd.Job) error {
	now := time.Now()
	r.mu.Lock()
	r.calls = append(r.calls, Call{Job: job, At: now})
	n := 0
	for _, c := range r.calls {
		if c.Job.DeliveryID == job.DeliveryID {
			n++
		}
	}
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
	if r.fn == nil {
		return nil
	}
	return r.fn(ctx, job, n)
}

// Snapshot returns the calls so far, and a channel closed at the next call.
func (r *Recorder) Snapshot() ([]Call, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...), r.wake
}

// count returns the number of calls so far.
func (r *Recorder) count() int {
	calls, _ := r.Snapshot()
	return len(calls)
}

// Reset forgets the calls so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// Wait returns the calls once there are at least n, failing t after timeout.
func (r *Recorder) Wait(t testing.TB, n int, timeout time.Duration) []Call {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		calls, wake := r.Snapshot()
		if len(calls) >= n {
			return calls
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("handler called %d times in %s, want %d:%s", len(calls), timeout, n, showCalls(calls))
		}
	}
}

// waitFor returns the calls once done says so, failing the test after timeout (times Timing).
func (f *fixture) waitFor(r *Recorder, what string, timeout time.Duration, done func([]Call) bool) []Call {
	f.t.Helper()
	timeout = f.scale(timeout)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		calls, wake := r.Snapshot()
		if done(calls) {
			return calls
		}
		select {
		case <-wake:
		case <-deadline.C:
			f.t.Fatalf("waited %s for %s; handler called %d times: %s", timeout, what, len(calls), showCalls(calls))
		}
	}
}

// wait returns the calls once there are at least n, failing the test after timeout (times
// Timing).
func (f *fixture) wait(r *Recorder, n int, timeout time.Duration) []Call {
	f.t.Helper()
	return f.waitFor(r, fmt.Sprintf("%d calls", n), timeout, func(calls []Call) bool { return len(calls) >= n })
}

// waitDelivery returns the calls once delivery id has been called, failing the test after
// callWait (times Timing).
func (f *fixture) waitDelivery(r *Recorder, id string) []Call {
	f.t.Helper()
	return f.waitFor(r, "a call for "+id, callWait, func(calls []Call) bool { return perDelivery(calls)[id] > 0 })
}

// perDelivery counts calls by delivery id.
func perDelivery(calls []Call) map[string]int {
	n := make(map[string]int, len(calls))
	for _, c := range calls {
		n[c.Job.DeliveryID]++
	}
	return n
}

// onceEach fails the test unless calls are exactly one for each of want, each with the job as
// enqueued.
func (f *fixture) onceEach(calls []Call, want []hookd.Job) {
	f.t.Helper()
	byID := make(map[string]hookd.Job, len(want))
	for _, j := range want {
		byID[j.DeliveryID] = j
	}
	n := perDelivery(calls)
	for id, c := range n {
		if _, ok := byID[id]; !ok {
			f.t.Errorf("handler called %d times for %s, never enqueued", c, id)
		}
	}
	for _, j := range want {
		if n[j.DeliveryID] != 1 {
			f.t.Errorf("handler called %d times for %s, want once", n[j.DeliveryID], j.DeliveryID)
		}
	}
	for _, c := range calls {
		if w, ok := byID[c.Job.DeliveryID]; ok && !sameJob(w, c.Job) {
			f.t.Errorf("handler got %s, want %s", showJob(c.Job), showJob(w))
		}
	}
}

// showCalls formats the first calls for a failure message.
func showCalls(calls []Call) string {
	const most = 10
	s := ""
	for i, c := range calls {
		if i == most {
			return s + fmt.Sprintf(" ... and %d more", len(calls)-most)
		}
		s += " " + showJob(c.Job)
	}
	return s
}
