package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

var (
	_ hookd.QueueDepther = (*Queue)(nil)
	_ hookd.QueueDepther = (*RiverQueue)(nil)
)

// queueDepthSQL counts the jobs of each lane, due or not, on the index hookd_jobs_due (lane,
// run_at), which holds every column it reads, and the deliveries that are their own first job
// on hookd_deliveries_first_job (their job_due, which no index holds, read from each row).
const queueDepthSQL = `SELECT lane, run_at <= $1, count(*) FROM hookd_jobs GROUP BY 1, 2
UNION ALL
SELECT 'first', coalesce(job_due <= $1, true), count(*) FROM hookd_deliveries
WHERE first_job AND status = 'pending' GROUP BY 1, 2`

// QueueDepth counts the jobs of each lane, with the deliveries that are their own first job in
// the first lane: Due those whose run_at has come, Scheduled the rest. A claimed job's run_at is
// the end of its lease, so a running job counts as Scheduled.
func (q *Queue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	rows, err := q.s.pool.Query(ctx, queueDepthSQL, time.Now())
	if err != nil {
		return nil, fmt.Errorf("postgres: queue depth: %w", err)
	}
	defer rows.Close()
	out, err := jobqueue.ReadDepths(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: queue depth: %w", err)
	}
	return out, nil
}

// QueueDepth counts the jobs of each lane in River's river_job table (riverqueue's QueueDepth).
func (q *RiverQueue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	return q.pgx.QueueDepth(ctx)
}
