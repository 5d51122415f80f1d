package riverqueue

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hookd/hookd"
)

var _ hookd.QueueDepther = (*Queue[*sql.Tx])(nil)

// queueDepthSQL counts the river_job rows of hookd's three River queues by lane and state in one
// row, on River's index of (state, queue). It names the queues and states as literals, so that it
// runs unchanged on every River driver, whatever its placeholders. available and running are due;
// scheduled and retryable (a failed job's back-off, a snooze) wait for their time.
const queueDepthSQL = `SELECT
	COALESCE(SUM(CASE WHEN queue = '` + QueueFirst + `' AND state IN ('available', 'running') THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN queue = '` + QueueFirst + `' AND state IN ('scheduled', 'retryable') THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN queue = '` + QueueRetry + `' AND state IN ('available', 'running') THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN queue = '` + QueueRetry + `' AND state IN ('scheduled', 'retryable') THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN queue = '` + QueueManual + `' AND state IN ('available', 'running') THEN 1 ELSE 0 END), 0),
	COALESCE(SUM(CASE WHEN queue = '` + QueueManual + `' AND state IN ('scheduled', 'retryable') THEN 1 ELSE 0 END), 0)
FROM river_job
WHERE state IN ('available', 'running', 'scheduled', 'retryable')
	AND queue IN ('` + QueueFirst + `', '` + QueueRetry + `', '` + QueueManual + `')`

// QueueDepth counts the jobs of each lane in River's river_job table: Due the available and
// running ones, Scheduled the scheduled and retryable ones. A job inserted with a NotBefore within
// River's 5 s scheduling step is available, so Due, before its time (see Timing).
func (q *Queue[TTx]) QueueDepth(ctx context.Context) ([]hookd.LaneDepth, error) {
	var n [6]int64
	row := q.driver.GetExecutor().QueryRow(ctx, queueDepthSQL)
	if err := row.Scan(&n[0], &n[1], &n[2], &n[3], &n[4], &n[5]); err != nil {
		return nil, fmt.Errorf("riverqueue: queue depth: %w", err)
	}
	return []hookd.LaneDepth{
		{Lane: hookd.LaneFirst, Due: n[0], Scheduled: n[1]},
		{Lane: hookd.LaneRetry, Due: n[2], Scheduled: n[3]},
		{Lane: hookd.LaneManual, Due: n[4], Scheduled: n[5]},
	}, nil
}
