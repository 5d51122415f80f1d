package redisqueue

import (
	"context"
	"errors"
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
//
// A parked delivery (pending with no next attempt time, behind an earlier delivery to its ordered
// endpoint) is enqueued only when it has become its endpoint's head: one read an endpoint a page,
// and no job for the deliveries that wait.
func (q *Queue) Sweep(ctx context.Context) (enqueued int, err error) {
	before := time.Now().Add(-q.cfg.SweepAfter)
	after := ""
	for {
		ds, err := q.store.DueDeliveries(ctx, before, after, sweepPage)
		if err != nil {
			return enqueued, fmt.Errorf("redisqueue: sweep: %w", err)
		}
		jobs := make([]hookd.Job, 0, len(ds))
		heads := make(map[string]string) // endpoint id: its first pending delivery's id
		for _, d := range ds {
			j := hookd.Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: hookd.TriggerScheduled}
			if d.NextAttemptAt != nil {
				j.NotBefore = *d.NextAttemptAt
			} else if head, err := q.head(ctx, heads, d.EndpointID); err != nil {
				return enqueued, fmt.Errorf("redisqueue: sweep: %w", err)
			} else if head != d.ID {
				continue // parked behind an earlier delivery to its ordered endpoint
			}
			jobs = append(jobs, j)
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

// head returns the id of the endpoint's first pending delivery ("" for none), read once a sweep
// page through heads.
func (q *Queue) head(ctx context.Context, heads map[string]string, endpointID string) (string, error) {
	if id, ok := heads[endpointID]; ok {
		return id, nil
	}
	d, err := q.store.FirstPendingDelivery(ctx, endpointID)
	id := ""
	switch {
	case err == nil:
		id = d.ID
	case !errors.Is(err, hookd.ErrNotFound):
		return "", err
	}
	heads[endpointID] = id
	return id, nil
}
