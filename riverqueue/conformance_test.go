package riverqueue_test

import (
	"context"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/riverqueue"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// TestConformance runs the queue conformance suite on River over a fresh SQLite file per
// subtest. It is not parallel, so that the suite's timing tests run alone.
func TestConformance(t *testing.T) {
	timing := 1.0
	if raceEnabled {
		timing = raceTiming
	}
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			b := setup(t)
			q, err := riverqueue.New(riversqlite.New(b.db), cfg, testLogger(t))
			if err != nil {
				t.Fatalf("riverqueue.New: %v", err)
			}
			inTx := func(ctx context.Context, fn func(hookd.Tx) error) error {
				tx, err := b.db.BeginTx(ctx, nil)
				if err != nil {
					return err
				}
				if err := fn(sqlTx{tx: tx}); err != nil {
					_ = tx.Rollback()
					return err
				}
				return tx.Commit()
			}
			return q, inTx
		},
		Timing: timing,
	})
}

// raceTiming scales the suite's bounds under the race detector, which slows modernc's SQLite
// several times over (see lateBound).
const raceTiming = 3
