package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.QueueDepther = (*Queue)(nil)

// queueDepthSQL counts the jobs of each lane, due or not, by a scan of the index hookd_jobs_due
// (lane, run_at), which holds every column it reads.
const queueDepthSQL = `SELECT lane, run_at <= ?, COUNT(*) FROM hookd_jobs GROUP BY 1, 2`

// QueueDepth counts the jobs of each lane: Due those whose run_at has come, running ones included
// (the queue keeps which jobs run in memory, not in the file), Scheduled the rest. It reads on
// one of the store's read connections and writes nothing.
func (q *Queue) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	rows, err := q.s.rdb.QueryContext(ctx, queueDepthSQL, time.Now().UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: queue depth: %w", err)
	}
	defer rows.Close()
	var out []hookd.LaneDepth
	for rows.Next() {
		var lane string
		var due bool
		var n int64
		if err := rows.Scan(&lane, &due, &n); err != nil {
			return nil, fmt.Errorf("sqlite: queue depth: %w", err)
		}
		out = addDepth(out, hookd.Lane(lane), due, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: queue depth: %w", err)
	}
	return out, nil
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
