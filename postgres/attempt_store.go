package postgres

import (
	"context"
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
