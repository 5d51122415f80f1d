package postgres_test

import (
	"context"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
)

// raceTiming scales the queue suite's bounds under the race detector.
const raceTiming = 3

// TestQueueConformance runs the queue suite on the store's queue (River on riverpgxv5), one
// schema per subtest, enqueueing through InTx. It is not parallel, so that the suite's timing
// tests run alone.
func TestQueueConformance(t *testing.T) {
	testURL(t)
	timing := 1.0
	if raceEnabled {
		timing = raceTiming
	}
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
		Timing: timing,
	})
}
