package redisqueue_test

import (
	"context"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
)

// TestConformance runs the queue conformance suite on a Redis queue per subtest, each in a
// namespace of its own over a SQLite store of its own (InTx is the store's). It is not parallel,
// so that the suite's timing tests run alone.
func TestConformance(t *testing.T) {
	u := redisURL(t)
	timing := 1.0
	if raceEnabled {
		timing = raceTiming
	}
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			store := openStore(t)
			return newQueue(t, u, store, cfg, nil), store.InTx
		},
		Timing: timing,
	})
}
