package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/queuetest"
)

// raceTiming scales the queue suite's bounds under the race detector.
const raceTiming = 3

func suiteTiming() float64 {
	if raceEnabled {
		return raceTiming
	}
	return 1
}

// TestQueueConformance runs the queue suite on the store's own queue, one schema per subtest,
// enqueueing through InTx. It is not parallel, so that the suite's timing tests run alone.
func TestQueueConformance(t *testing.T) {
	testURL(t)
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			b := setup(t)
			q, err := b.store.NewQueue(cfg)
			if err != nil {
				t.Fatalf("NewQueue: %v", err)
			}
			return q, b.store.InTx
		},
		Timing: suiteTiming(),
	})
}

// TestRiverQueueConformance runs the queue suite on the River queue the store also offers.
func TestRiverQueueConformance(t *testing.T) {
	testURL(t)
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			b := setup(t)
			q, err := b.store.NewRiverQueue(context.Background(), cfg)
			if err != nil {
				t.Fatalf("NewRiverQueue: %v", err)
			}
			return q, b.store.InTx
		},
		Timing: suiteTiming(),
	})
}

// process is a second hookd process on a bundle's schema: a store of its own (its own pool) and
// its queue.
func process(t *testing.T, b *bundle, cfg *hookd.QueueConfig) (*postgres.Store, hookd.Queue) {
	t.Helper()
	s, err := postgres.Open(context.Background(), b.url, &postgres.Config{Schema: b.schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	q, err := s.NewQueue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s, q
}

func enqueue(t *testing.T, s *postgres.Store, q hookd.Queue, jobs ...hookd.Job) {
	t.Helper()
	err := s.InTx(context.Background(), func(tx hookd.Tx) error { return q.EnqueueTx(context.Background(), tx, jobs) })
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// calls counts a handler's calls by delivery id, and by the process that made them.
type calls struct {
	mu   sync.Mutex
	n    map[string]int
	by   map[string]int
	seen chan string
}

func newCalls() *calls {
	return &calls{n: map[string]int{}, by: map[string]int{}, seen: make(chan string, 10_000)}
}

func (c *calls) handler(process string, work func(ctx context.Context, j hookd.Job) error) hookd.JobHandler {
	return func(ctx context.Context, j hookd.Job) error {
		err := work(ctx, j)
		if err == nil {
			c.mu.Lock()
			c.n[j.DeliveryID]++
			c.by[process]++
			c.mu.Unlock()
			c.seen <- j.DeliveryID
		}
		return err
	}
}

func (c *calls) wait(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for range n {
		select {
		case <-c.seen:
		case <-deadline:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("%d jobs worked after %s, want %d", len(c.n), within, n)
		}
	}
}

// TestQueueProcessesShareJobs starts two processes on one schema: every job is worked once, and
// both work some.
func TestQueueProcessesShareJobs(t *testing.T) {
	b := setup(t)
	cfg := &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: 10}}
	s1, q1 := process(t, b, cfg)
	_, q2 := process(t, b, cfg)
	c := newCalls()
	work := func(ctx context.Context, j hookd.Job) error { time.Sleep(5 * time.Millisecond); return nil }
	const n = 600
	jobs := make([]hookd.Job, n)
	for i := range jobs {
		jobs[i] = hookd.Job{DeliveryID: fmt.Sprintf("dlv_%04d", i), Attempt: 1}
	}
	enqueue(t, s1, q1, jobs...)
	if err := q1.Start(context.Background(), c.handler("one", work)); err != nil {
		t.Fatal(err)
	}
	if err := q2.Start(context.Background(), c.handler("two", work)); err != nil {
		t.Fatal(err)
	}
	c.wait(t, n, 30*time.Second)
	time.Sleep(200 * time.Millisecond) // a job worked twice would show by now
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, k := range c.n {
		if k != 1 {
			t.Errorf("job %s worked %d times, want once", id, k)
		}
	}
	if len(c.n) != n {
		t.Errorf("%d jobs worked, want %d", len(c.n), n)
	}
	if c.by["one"] == 0 || c.by["two"] == 0 {
		t.Errorf("jobs worked by process: %v; want both to work some", c.by)
	}
}

// TestQueueNotifyWakesOtherProcesses: with polls an hour apart, a job enqueued in one process
// reaches the other process's workers through the notification alone.
func TestQueueNotifyWakesOtherProcesses(t *testing.T) {
	b := setup(t)
	s1, q1 := process(t, b, nil)
	_, q2 := process(t, b, nil)
	postgres.SetQueueTiming(q2, time.Hour, time.Hour)
	listening := make(chan struct{}, 1)
	postgres.OnListen(q2, func() { listening <- struct{}{} })
	c := newCalls()
	if err := q2.Start(context.Background(), c.handler("two", func(context.Context, hookd.Job) error { return nil })); err != nil {
		t.Fatal(err)
	}
	select {
	case <-listening:
	case <-time.After(10 * time.Second):
		t.Fatal("the queue is not listening after 10 s")
	}
	time.Sleep(50 * time.Millisecond) // the claim that listening woke has run
	for i, lane := range []hookd.Job{
		{DeliveryID: "dlv_first", Attempt: 1},
		{DeliveryID: "dlv_retry", Attempt: 2},
		{DeliveryID: "dlv_manual", Attempt: 1, Trigger: hookd.TriggerManual},
	} {
		enqueue(t, s1, q1, lane)
		c.wait(t, 1, 5*time.Second)
		if got := len(c.n); got != i+1 {
			t.Fatalf("%d jobs worked, want %d", got, i+1)
		}
	}
	// An app's own transaction (WrapTx) notifies inside it, at its commit.
	ctx := context.Background()
	ptx, err := s1.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := s1.WrapTx(ptx)
	if err != nil {
		t.Fatal(err)
	}
	if err := q1.EnqueueTx(ctx, wrapped, []hookd.Job{{DeliveryID: "dlv_wrapped", Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := ptx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 1, 5*time.Second)
}

// TestQueueLeaseRunsOut: a job whose process stops answering (its handler hangs) is claimed by
// another process once its lease runs out, and the first claim's late outcome changes nothing.
func TestQueueLeaseRunsOut(t *testing.T) {
	b := setup(t)
	// One worker: once the job hangs in it, the first process claims nothing more, as if dead.
	s1, q1 := process(t, b, &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: 1}})
	_, q2 := process(t, b, nil)
	postgres.SetQueueTiming(q1, 500*time.Millisecond, 20*time.Millisecond)
	hung, release := make(chan struct{}, 1), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	c := newCalls()
	err := q1.Start(context.Background(), func(ctx context.Context, j hookd.Job) error {
		select {
		case hung <- struct{}{}:
		default:
		}
		<-release
		return fmt.Errorf("late failure of the first claim")
	})
	if err != nil {
		t.Fatal(err)
	}
	// The claim comes after the enqueue, so its lease runs out at least 500 ms after this. (Timed
	// from the handler's start instead, the test failed on a loaded machine: the handler started
	// a few hundred milliseconds after the claim.)
	enqueued := time.Now()
	enqueue(t, s1, q1, hookd.Job{DeliveryID: "dlv_lease", Attempt: 1})
	select {
	case <-hung:
	case <-time.After(5 * time.Second):
		t.Fatal("the first process did not claim the job")
	}
	if err := q2.Start(context.Background(), c.handler("two", func(context.Context, hookd.Job) error { return nil })); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 1, 10*time.Second)
	if waited := time.Since(enqueued); waited < 450*time.Millisecond {
		t.Errorf("the second process got the job %s after it was enqueued, before the first claim's 500 ms lease ran out", waited)
	}
	close(release) // the first claim fails late: its outcome must not bring the job back
	time.Sleep(time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n["dlv_lease"] != 1 {
		t.Errorf("job worked %d times by the second process, want 1", c.n["dlv_lease"])
	}
}

// TestQueueStopGivesJobsBack: a job cancelled by a hard Stop is due again at once for another
// process, not after its lease.
func TestQueueStopGivesJobsBack(t *testing.T) {
	b := setup(t)
	s1, q1 := process(t, b, nil)
	_, q2 := process(t, b, nil)
	postgres.SetQueueTiming(q1, time.Hour, 20*time.Millisecond)
	running := make(chan struct{}, 1)
	err := q1.Start(context.Background(), func(ctx context.Context, j hookd.Job) error {
		running <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, s1, q1, hookd.Job{DeliveryID: "dlv_stop", Attempt: 1})
	select {
	case <-running:
	case <-time.After(5 * time.Second):
		t.Fatal("the first process did not claim the job")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := q1.Stop(ctx); err == nil {
		t.Fatal("Stop returned nil with a job cancelled, want an error")
	}
	c := newCalls()
	if err := q2.Start(context.Background(), c.handler("two", func(context.Context, hookd.Job) error { return nil })); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 1, 5*time.Second)
}

func TestNotifyChannel(t *testing.T) {
	seen := map[string]string{}
	for _, schema := range []string{"", "public", "tenant_a", "tenant_b", strings.Repeat("x", 63)} {
		ch := postgres.NotifyChannel(schema)
		if len(ch) > 63 {
			t.Errorf("channel of %q is %d bytes, want at most 63 (an identifier)", schema, len(ch))
		}
		if other, ok := seen[ch]; ok {
			t.Errorf("schemas %q and %q share the channel %s", other, schema, ch)
		}
		seen[ch] = schema
	}
}
