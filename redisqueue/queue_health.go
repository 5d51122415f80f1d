package redisqueue

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

var _ hookd.QueueHealthChecker = (*Queue)(nil)

// QueueHealth tells hookd.Client.Health whether Redis answers a PING within ctx. The workers'
// own progress is asynq's, which tells none; the sweeper's failures are logged (package outage),
// and come from Redis or the store, which the queue's and the database's checks cover.
func (q *Queue) QueueHealth(ctx context.Context) hookd.QueueHealth {
	h := hookd.QueueHealth{Separate: true}
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		h.Backend = &hookd.HealthError{Reason: "Redis does not answer", Err: fmt.Errorf("redisqueue: PING Redis at %s: %w", q.redisURL, err)}
	} else {
		q.redisBack()
	}
	return h
}
