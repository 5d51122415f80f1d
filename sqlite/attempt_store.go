package sqlite

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

const attemptCols = `a.id, a.delivery_id, a.message_id, a.endpoint_id, a.app_id, a.number, a.trigger_kind, a.url,
	a.at, a.duration, a.status_code, a.success, a.error, a.response, a.request_headers, a.response_headers`

// ExpungeAttemptResponse replaces the attempt's captured response with hookd.ExpungedResponse and
// clears its response headers; a missing attempt is hookd.ErrNotFound.
func (t *txn) ExpungeAttemptResponse(ctx context.Context, attemptID string) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_attempts SET response = ?, response_headers = '' WHERE id = ?`, hookd.ExpungedResponse, attemptID))
	if err != nil {
		return fmt.Errorf("expunge response of attempt %s: %w", attemptID, err)
	}
	return nil
}
