package queuetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// snoozeFor is the delay the Snooze test asks for.
const snoozeFor = 300 * time.Millisecond

var workTests = []test{
	{"SnoozeRunsSameJobLater", nil, func(t *testing.T, f *fixture) {
		var snoozedAt atomic.Int64 // Unix nanoseconds when the handler returned the snooze
		rec := NewRecorder(func(_ context.Context, _ hookd.Job, n int) error {
			if n == 1 {
				snoozedAt.Store(time.Now().UnixNano())
				return hookd.Snooze(snoozeFor, "endpoint busy")
			}
			return nil
		})
		f.start(rec.Handle)
		want := retryJob("dlv_1")
		want.NotBefore = past
		f.enqueue(want)

		calls := f.wait(rec, 2, callWait)
		if gap := calls[1].At.Sub(time.Unix(0, snoozedAt.Load())); gap < snoozeFor {
			t.Errorf("called again %s after it snoozed for %s", gap, snoozeFor)
		}
		if !sameJob(want, calls[0].Job) {
			t.Errorf("handler got %s, want %s", showJob(calls[0].Job), showJob(want))
		}
		if calls[1].Job != calls[0].Job {
			t.Errorf("after a snooze the handler got %s, want the identical job %s", showJob(calls[1].Job), showJob(calls[0].Job))
		}
		f.quiet()
		if n := rec.count(); n != 2 {
			t.Errorf("handler called %d times, want 2 (a snooze, then done)", n)
		}
	}},
	{"ErrorIsRetried", nil, func(t *testing.T, f *fixture) {
		errLocked := errors.New("database is locked")
		rec := NewRecorder(func(_ context.Context, _ hookd.Job, n int) error {
			if n == 1 {
				return errLocked
			}
			return nil
		})
		f.start(rec.Handle)
		want := firstJob("dlv_1")
		f.enqueue(want)

		calls := f.wait(rec, 2, callWait)
		t.Logf("retried %s after the error", calls[1].At.Sub(calls[0].At).Round(time.Millisecond))
		for i, c := range calls[:2] {
			if !sameJob(want, c.Job) {
				t.Errorf("call %d got %s, want %s", i+1, showJob(c.Job), showJob(want))
			}
		}
		f.quiet()
		if n := rec.count(); n != 2 {
			t.Errorf("handler called %d times, want 2 (an error, then done)", n)
		}
	}},
	{"LanesAreIndependent", &hookd.QueueConfig{Workers: map[hookd.Lane]int{
		hookd.LaneFirst: 1, hookd.LaneRetry: 1, hookd.LaneManual: 1,
	}}, func(t *testing.T, f *fixture) {
		gates := map[hookd.Lane]*gate{}
		for _, l := range lanes {
			gates[l] = f.newGate()
		}
		rec := NewRecorder(func(ctx context.Context, job hookd.Job, _ int) error {
			if strings.HasPrefix(job.DeliveryID, "block_") {
				return gates[job.Lane()].wait(ctx)
			}
			return nil
		})
		f.start(rec.Handle)
		// In turn, the one worker of each lane is held busy while a job in each other lane is
		// enqueued and must be worked.
		for _, busy := range lanes {
			blocker := laneJobs[busy]("block_" + string(busy))
			f.enqueue(blocker)
			f.waitDelivery(rec, blocker.DeliveryID)
			for _, l := range lanes {
				if l == busy {
					continue
				}
				j := laneJobs[l](fmt.Sprintf("dlv_%s_while_%s_busy", l, busy))
				f.enqueue(j)
				f.waitDelivery(rec, j.DeliveryID)
			}
			gates[busy].open()
		}
	}},
	{"WorkersBoundConcurrency", &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: 3}}, func(t *testing.T, f *fixture) {
		const workers, jobs = 3, 10
		release := f.newGate()
		var running, most atomic.Int64
		rec := NewRecorder(func(ctx context.Context, _ hookd.Job, _ int) error {
			raise(&most, running.Add(1))
			defer running.Add(-1)
			return release.wait(ctx)
		})
		f.start(rec.Handle)
		var want []hookd.Job
		for i := range jobs {
			want = append(want, firstJob(fmt.Sprintf("dlv_%d", i)))
		}
		f.enqueue(want...)

		f.wait(rec, workers, callWait)
		f.quiet()
		if n := rec.count(); n != workers {
			t.Errorf("%d handlers running at once, want %d (QueueConfig.Workers)", n, workers)
		}
		release.open()
		f.wait(rec, jobs, callWait)
		f.quiet()
		calls, _ := rec.Snapshot()
		f.onceEach(calls, want)
		if m := most.Load(); m != workers {
			t.Errorf("at most %d handlers ran at once, want %d", m, workers)
		}
	}},
	{"ManyJobsInOneTransaction", nil, func(t *testing.T, f *fixture) {
		const jobs = 500
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		var want []hookd.Job
		for i := range jobs {
			want = append(want, laneJobs[lanes[i%len(lanes)]](fmt.Sprintf("dlv_%03d", i)))
		}
		f.enqueue(want...)
		f.wait(rec, jobs, 6*callWait)
		f.quiet()
		calls, _ := rec.Snapshot()
		f.onceEach(calls, want)
	}},
	{"JobTimeout", &hookd.QueueConfig{JobTimeout: 200 * time.Millisecond}, func(t *testing.T, f *fixture) {
		const timeout = 200 * time.Millisecond
		type seen struct {
			deadline    time.Time
			hasDeadline bool
			left        time.Duration
			err         error
		}
		got := make(chan seen, 1)
		rec := NewRecorder(func(ctx context.Context, _ hookd.Job, n int) error {
			var s seen
			s.deadline, s.hasDeadline = ctx.Deadline()
			s.left = time.Until(s.deadline)
			select {
			case <-ctx.Done():
				s.err = ctx.Err()
			case <-time.After(f.scale(callWait)):
			}
			if n == 1 {
				got <- s
			}
			return nil
		})
		f.start(rec.Handle)
		f.enqueue(firstJob("dlv_1"))
		var s seen
		select {
		case s = <-got:
		case <-time.After(f.scale(2 * callWait)):
			t.Fatalf("handler not called, or did not return, in %s", f.scale(2*callWait))
		}
		if !s.hasDeadline {
			t.Fatal("the handler's context has no deadline, want one JobTimeout away")
		}
		t.Logf("deadline %s away when the handler was called", s.left)
		if s.left > timeout {
			t.Errorf("the handler's deadline was %s away, want at most JobTimeout %s", s.left, timeout)
		}
		if !errors.Is(s.err, context.DeadlineExceeded) {
			t.Errorf("the handler's context ended with %v, want DeadlineExceeded by JobTimeout", s.err)
		}
	}},
}

// raise sets m to n when n is larger.
func raise(m *atomic.Int64, n int64) {
	for {
		old := m.Load()
		if n <= old || m.CompareAndSwap(old, n) {
			return
		}
	}
}
