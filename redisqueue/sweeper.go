package redisqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// sweepPage is how many deliveries the sweeper reads at once.
const sweepPage = 500

// Sweep enqueues the job of every pending delivery whose next attempt was due more than
// SweepAfter ago: Job{DeliveryID, Attempt: attempts made + 1, Trigger: hookd.TriggerScheduled,
// NotBefore: its next attempt time}. A delivery whose job asynq holds (waiting, running or
// scheduled) keeps it: the job's task id is taken, so nothing runs twice, also when the sweeps
// of several processes overlap. It returns how many jobs it enqueued, and stops at the first
// error (the next sweep goes on from the start). Start runs it at once and then every
// SweepInterval; operators and tests may call it at any time, on a started queue or not.
func (q *Queue) Sweep(ctx context.Context) (enqueued int, err error) {
	before := time.Now().Add(-q.cfg.SweepAfter)
	after := ""
	for {
		ds, err := q.store.DueDeliveries(ctx, before, after, sweepPage)
		if err != nil {
			return enqueued, fmt.Errorf("redisqueue: sweep: %w", err)
		}
		jobs := make([]hookd.Job, len(ds))
		for i, d := range ds {
			jobs[i] = hookd.Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: hookd.TriggerScheduled}
			if d.NextAttemptAt != nil {
				jobs[i].NotBefore = *d.NextAttemptAt
			}
		}
		n, err := q.enqueueAll(ctx, jobs)
		enqueued += n
		if err != nil {
			return enqueued, fmt.Errorf("redisqueue: sweep: %w", err)
		}
		if len(ds) < sweepPage {
			return enqueued, nil
		}
		after = ds[len(ds)-1].ID
	}
}
