package redisqueue

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/redis/go-redis/v9"
)

var _ hookd.QueueDepther = (*Queue)(nil)

// queueKey is the key of one of asynq's per-queue structures ("pending", "active", "scheduled",
// "retry") for lane l of namespace ns: asynq:{<queue>}:<kind>.
func queueKey(ns string, l hookd.Lane, kind string) string {
	return "asynq:{" + QueueName(ns, l) + "}:" + kind
}

// QueueDepth counts the tasks of each lane in one round trip, four commands per lane: Due is the
// length of asynq's pending and active lists (tasks ready, and tasks being worked), Scheduled the
// size of its scheduled and retry sets (tasks waiting for their time: a NotBefore, a snooze, a
// failed job's back-off). Archived tasks, given up after about a week, are not counted.
func (q *Queue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	type laneCmds struct{ pending, active, scheduled, retry *redis.IntCmd }
	cmds := make([]laneCmds, len(lanes))
	ns := q.cfg.Namespace
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, l := range lanes {
			cmds[i] = laneCmds{
				pending:   p.LLen(ctx, queueKey(ns, l, "pending")),
				active:    p.LLen(ctx, queueKey(ns, l, "active")),
				scheduled: p.ZCard(ctx, queueKey(ns, l, "scheduled")),
				retry:     p.ZCard(ctx, queueKey(ns, l, "retry")),
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisqueue: queue depth at %s: %w", q.redisURL, err)
	}
	out := make([]hookd.LaneDepth, len(lanes))
	for i, l := range lanes {
		c := cmds[i]
		out[i] = hookd.LaneDepth{Lane: l, Due: c.pending.Val() + c.active.Val(), Scheduled: c.scheduled.Val() + c.retry.Val()}
	}
	return out, nil
}
