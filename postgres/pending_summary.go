package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// pendingSummarySQL reads the pending deliveries alone, through the partial index
// hookd_deliveries_pending (the status is the literal the index names, so that a generic plan of
// the prepared statement uses it too): its cost follows the backlog, not the log.
const pendingSummarySQL = `SELECT d.endpoint_id, MIN(d.app_id), COUNT(*), MIN(d.created_at)
FROM hookd_deliveries d WHERE d.status = 'pending'
GROUP BY d.endpoint_id
ORDER BY d.endpoint_id`

// PendingSummary returns each endpoint's count of pending deliveries and the oldest one's creation
// time, ordered by endpoint id; endpoints with none are left out.
func (q *queries) PendingSummary(ctx context.Context) ([]hookd.PendingEndpoint, error) {
	out, err := collect(ctx, q.c, pendingSummarySQL, nil, func(r row) (hookd.PendingEndpoint, error) {
		var (
			p      hookd.PendingEndpoint
			oldest time.Time
		)
		if err := r.Scan(&p.EndpointID, &p.AppID, &p.Pending, &oldest); err != nil {
			return p, err
		}
		p.Oldest = oldest.UTC()
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("pending summary: %w", classify(err))
	}
	return out, nil
}
