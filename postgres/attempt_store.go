package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/hookd/hookd"
)

const attemptCols = `a.id, a.delivery_id, a.message_id, a.endpoint_id, a.app_id, a.number, a.trigger_kind, a.url,
	a.at, a.duration_us, a.status_code, a.success, a.error, a.response, a.request_headers, a.response_headers`

// ExpungeAttemptResponse replaces the attempt's captured response with hookd.ExpungedResponse and
// clears its response headers; a missing attempt is hookd.ErrNotFound. The response is bytea: a receiver's body may hold any bytes.
func (t *txn) ExpungeAttemptResponse(ctx context.Context, attemptID string) error {
	err := mustAffect(t.c.exec(ctx, `UPDATE hookd_attempts SET response = $2, response_headers = '' WHERE id = $1`, attemptID, []byte(hookd.ExpungedResponse)))
	if err != nil {
		return fmt.Errorf("expunge response of attempt %s: %w", attemptID, err)
	}
	return nil
}

// ListAttempts lists attempts newest first (package sqlstore's list). No index holds an
// attempt's delivery (migration 15): a delivery is one message to one endpoint of one
// application, so with f.DeliveryID and no f.MessageID the list reads the delivery first and
// filters by its message instead of its endpoint and application, walking the message's
// attempts (hookd_attempts_message_id), a few for each endpoint. A delivery that does not
// exist, or is not of f's endpoint or application, has no attempts.
func (q *queries) ListAttempts(ctx context.Context, f hookd.AttemptFilter) (*hookd.Page[hookd.Attempt], error) {
	if f.DeliveryID != "" && f.MessageID == "" {
		var endpointID, appID string
		err := classify(q.c.queryRow(ctx, `SELECT message_id, endpoint_id, app_id FROM hookd_deliveries WHERE id = $1`,
			f.DeliveryID).Scan(&f.MessageID, &endpointID, &appID))
		if errors.Is(err, hookd.ErrNotFound) || err == nil && (f.EndpointID != "" && f.EndpointID != endpointID || f.AppID != "" && f.AppID != appID) {
			return &hookd.Page[hookd.Attempt]{Data: []hookd.Attempt{}, Done: true}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list attempts of delivery %s: %w", f.DeliveryID, err)
		}
		// The delivery's attempts are all of its endpoint and application: without those
		// filters, no plan can walk their indexes instead of the message's.
		f.EndpointID, f.AppID = "", ""
	}
	return q.sharedReads.ListAttempts(ctx, f)
}
