package redisqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.QueueHealthChecker = (*Queue)(nil)

// QueueHealth tells hookd.Client.Health whether Redis answers a PING within ctx, and, while the
// queue runs, whether the sweeper's passes fail (the workers' own progress is asynq's).
func (q *Queue) QueueHealth(ctx context.Context) hookd.QueueHealth {
	h := hookd.QueueHealth{Separate: true}
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		h.Backend = &hookd.HealthError{Reason: "Redis does not answer", Err: fmt.Errorf("redisqueue: PING Redis at %s: %w", q.redisURL, err)}
	}
	if s, ok := q.sweepFails.State(); ok {
		h.Workers = &hookd.HealthError{Reason: "sweeps fail",
			Err: fmt.Errorf("%s: %s (failing for %s, %d failures)", s.Cause, s.Err, time.Since(s.Since).Round(time.Second), s.Failures)}
	}
	return h
}
