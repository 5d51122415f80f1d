package sqlite

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

// pendingSummarySQL walks the distinct endpoint ids of the pending deliveries one index seek at a
// time (a skip scan: the recursive eps), then, for each, reads its pending deliveries, all on the
// partial index hookd_deliveries_endpoint_pending (endpoint_id, id) WHERE status = 'pending'. It
// costs a seek per endpoint with a pending delivery plus a read per pending delivery, where a
// plain GROUP BY over every delivery would read each one's index entry (0.17 s against 0.025 s in
// a million deliveries, 0.2 % pending, on 2,000 endpoints) while holding the one connection the
// workers share. The status is a literal, not a parameter, so that the planner may use the partial
// index.
const pendingSummarySQL = `WITH RECURSIVE eps(id) AS (
	SELECT (SELECT MIN(endpoint_id) FROM hookd_deliveries WHERE status = 'pending')
	UNION ALL
	SELECT (SELECT MIN(endpoint_id) FROM hookd_deliveries WHERE status = 'pending' AND endpoint_id > eps.id)
	FROM eps WHERE eps.id IS NOT NULL
)
SELECT d.endpoint_id, MIN(d.app_id), COUNT(*), MIN(d.created_at)
FROM eps CROSS JOIN hookd_deliveries d ON d.endpoint_id = eps.id AND d.status = 'pending'
GROUP BY d.endpoint_id
ORDER BY d.endpoint_id`

// PendingSummary returns each endpoint's count of pending deliveries and the oldest one's creation
// time, ordered by endpoint id; endpoints with none are left out.
func (q *queries) PendingSummary(ctx context.Context) ([]hookd.PendingEndpoint, error) {
	rows, err := q.q.QueryContext(ctx, pendingSummarySQL)
	if err != nil {
		return nil, fmt.Errorf("pending summary: %w", classify(err))
	}
	defer rows.Close()
	var out []hookd.PendingEndpoint
	for rows.Next() {
		var (
			p      hookd.PendingEndpoint
			oldest int64
		)
		if err := rows.Scan(&p.EndpointID, &p.AppID, &p.Pending, &oldest); err != nil {
			return nil, fmt.Errorf("pending summary: %w", err)
		}
		p.Oldest = fromMicros(oldest)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending summary: %w", classify(err))
	}
	return out, nil
}
