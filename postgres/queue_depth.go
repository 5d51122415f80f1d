package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

var (
	_ hookd.QueueDepther = (*Queue)(nil)
	_ hookd.QueueDepther = (*RiverQueue)(nil)
)

// queueDepthSQL counts the jobs of each lane, due or not, on the index hookd_jobs_due (lane,
// run_at), which holds every column it reads.
const queueDepthSQL = `SELECT lane, run_at <= $1, count(*) FROM hookd_jobs GROUP BY 1, 2`

// QueueDepth counts the jobs of each lane: Due those whose run_at has come, Scheduled the rest.
// A claimed job's run_at is the end of its lease, so a running job counts as Scheduled.
func (q *Queue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	rows, err := q.s.pool.Query(ctx, queueDepthSQL, time.Now())
	if err != nil {
		return nil, fmt.Errorf("postgres: queue depth: %w", err)
	}
	defer rows.Close()
	var out []hookd.LaneDepth
	for rows.Next() {
		var lane string
		var due bool
		var n int64
		if err := rows.Scan(&lane, &due, &n); err != nil {
			return nil, fmt.Errorf("postgres: queue depth: %w", err)
		}
		out = addDepth(out, hookd.Lane(lane), due, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: queue depth: %w", err)
	}
	return out, nil
}

// QueueDepth counts the jobs of each lane in River's river_job table (riverqueue's QueueDepth).
func (q *RiverQueue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	return q.pgx.QueueDepth(ctx)
}

// addDepth adds n jobs of lane, due or scheduled, to ds.
func addDepth(ds []hookd.LaneDepth, lane hookd.Lane, due bool, n int64) []hookd.LaneDepth {
	i := 0
	for i < len(ds) && ds[i].Lane != lane {
		i++
	}
	if i == len(ds) {
		ds = append(ds, hookd.LaneDepth{Lane: lane})
	}
	if due {
		ds[i].Due += n
	} else {
		ds[i].Scheduled += n
	}
	return ds
}
