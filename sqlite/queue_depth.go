package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

var _ hookd.QueueDepther = (*Queue)(nil)

// queueDepthSQL counts the jobs of each lane, due or not, by a scan of the index hookd_jobs_due
// (lane, run_at), which holds every column it reads, and the deliveries' own first jobs (due first
// jobs) by a scan of the partial index hookd_deliveries_first_job.
const queueDepthSQL = `SELECT lane, run_at <= ?, COUNT(*) FROM hookd_jobs GROUP BY 1, 2
	UNION ALL SELECT 'first', 1, COUNT(*) FROM hookd_deliveries WHERE first_job AND status = 'pending' HAVING COUNT(*) > 0`

// QueueDepth counts the jobs of each lane: Due those whose run_at has come, running ones included
// (the queue keeps which jobs run in memory, not in the file), Scheduled the rest. It reads on
// one of the store's read connections and writes nothing.
func (q *Queue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	rows, err := q.s.rdb.QueryContext(ctx, queueDepthSQL, time.Now().UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: queue depth: %w", err)
	}
	defer rows.Close()
	out, err := jobqueue.ReadDepths(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: queue depth: %w", err)
	}
	return out, nil
}
