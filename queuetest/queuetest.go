// Package queuetest is the conformance suite every hookd.Queue passes unchanged: run it from the
// backend's own test with a Harness that builds a queue on a fresh database.
//
//	func TestConformance(t *testing.T) { // not parallel: the timing tests run alone
//		queuetest.Run(t, queuetest.Harness{
//			New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
//				db := openFreshDatabase(t) // closed with t.Cleanup
//				q, err := mybackend.New(db, cfg)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return q, func(ctx context.Context, fn func(hookd.Tx) error) error {
//					return inTx(ctx, db, fn) // commit when fn returns nil, else roll back
//				}
//			},
//		})
//	}
//
// riverqueue's TestConformance is a real harness. The suite tests behaviour only through
// hookd.Queue and the handler it gives Start: it never reads a backend's tables, and it never
// calls the hookd.Tx that InTx passes except by handing it to EnqueueTx, so a harness may pass an
// adapter that implements Raw alone. Most tests are parallel subtests (group Parallel), each with
// a queue and a database of its own, so New must isolate (a file, a schema or a database per
// call) and release what it opens with t.Cleanup. The tests whose bounds are on timing (group
// Timing) run after them, one at a time; call Run from a test that is not parallel, so that they
// also run alone in the package. The 6 s NotBeforeFar test is skipped with -short.
//
// The suite stops every queue it built (Stop with a context of 10 s times Timing, its error
// ignored) before the harness's own cleanups run, so the harness only releases the database.
// Stop of a queue that was never started, or is stopped already, must return.
//
// # Timing
//
// Every bound on time (how late a handler may be called, how long the suite waits for a call or
// for nothing to happen) is multiplied by Harness.Timing. Lower bounds are correctness and are
// never scaled: a job is never worked before its NotBefore, nor a snoozed job before its delay.
//
// # What a queue must do to pass
//
//   - EnqueueTx inserts in the transaction it is given: a job committed is worked, a job rolled
//     back never is. It works before Start; such jobs are worked once Start is called.
//   - EnqueueTx with no jobs returns nil; with a nil tx or a tx whose Raw is not the backend's
//     transaction type it returns an error wrapping hookd.ErrUnsupportedTx (with jobs given); a job
//     with an empty DeliveryID gives an error wrapping hookd.ErrInvalid.
//   - The handler gets the job as enqueued: DeliveryID, Attempt and Trigger equal, NotBefore the
//     same instant to the microsecond (kept or truncated; the suite's NotBefore values have fewer
//     than 500 ns past the microsecond, so rounding passes too). A zero NotBefore stays zero.
//   - A job whose handler returns nil is worked exactly once, and is not worked again after Stop
//     and Start.
//   - A job is never handed to the handler before its NotBefore; a job due within 1.2 s is handed
//     over at most 150 ms late, one due in 6 s at most 300 ms late, in every lane.
//   - A handler that returns hookd.Snooze(d) is called again with the identical Job (a snooze
//     uses no attempt), no sooner than d after it returned, within 5 s.
//   - A handler that returns another error is called again with the same Job within 5 s.
//   - Stop waits for a job in flight: the handler's context is not cancelled while Stop's context
//     lasts, and Stop returns nil once the job is done. When Stop's context ends first, the
//     running handler's context is cancelled, Stop returns an error, and the job runs again after
//     the queue is started again (Start on the same queue, with a new handler).
//   - Start while started returns an error, and the queue goes on with its first handler alone;
//     Start with a nil handler returns an error, and the queue can then be started with a real
//     one.
//   - Each lane has workers of its own: a lane whose workers are all busy does not delay a job in
//     another lane. QueueConfig.Workers bounds the jobs a lane works at once, exactly.
//   - A queue takes 500 jobs in one transaction and works each once.
//   - QueueConfig.JobTimeout bounds the handler: its context has a deadline at most JobTimeout
//     away when it is called, and ends by then.
package queuetest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// Harness builds what a test needs on a fresh database.
type Harness struct {
	// New returns a queue on a fresh database (cleaned up by the test), sized by cfg (nil: defaults),
	// and InTx, which runs fn in a transaction of that database that the queue's EnqueueTx accepts,
	// committing it when fn returns nil and rolling it back otherwise.
	New func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(ctx context.Context, fn func(hookd.Tx) error) error)
	// Timing scales the suite's timing bounds (1 when zero): raise it for a slow backend or under -race.
	Timing float64
}

type test struct {
	name string
	// cfg sizes the test's queue (nil: the backend's defaults).
	cfg *hookd.QueueConfig
	fn  func(t *testing.T, f *fixture)
}

// Run runs the suite against the queues h builds, one per subtest.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("queuetest: Harness.New is nil")
	}
	if h.Timing < 0 || math.IsNaN(h.Timing) || math.IsInf(h.Timing, 0) {
		t.Fatalf("queuetest: Harness.Timing is %v; use a positive factor, or zero for 1", h.Timing)
	}
	if h.Timing == 0 {
		h.Timing = 1
	}
	var parallel []test
	for _, g := range [][]test{enqueueTests, workTests, lifecycleTests} {
		parallel = append(parallel, g...)
	}
	t.Run("Parallel", func(t *testing.T) {
		for _, tc := range parallel {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.fn(t, newFixture(t, h, tc.cfg))
			})
		}
	})
	t.Run("Timing", func(t *testing.T) {
		for _, tc := range timingTests {
			t.Run(tc.name, func(t *testing.T) {
				tc.fn(t, newFixture(t, h, tc.cfg))
			})
		}
	})
}

// scale returns d multiplied by timing.
func scale(d time.Duration, timing float64) time.Duration {
	return time.Duration(float64(d) * timing)
}
