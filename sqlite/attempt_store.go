package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
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

// AttemptsPerHour counts attempts by hour, walking the application's (or the endpoint's) index
// from f.FromID.
func (q *queries) AttemptsPerHour(ctx context.Context, f hookd.AttemptStatsFilter) ([]hookd.HourCount, error) {
	const hour = int64(time.Hour / time.Microsecond)
	query := `SELECT at / ? AS h, SUM(success), COUNT(*) - SUM(success) FROM hookd_attempts
		WHERE app_id = ? AND id >= ? AND at >= ?`
	args := []any{hour, f.AppID, f.FromID, micros(f.Since)}
	if f.EndpointID != "" {
		query = `SELECT at / ? AS h, SUM(success), COUNT(*) - SUM(success) FROM hookd_attempts
		WHERE endpoint_id = ? AND app_id = ? AND id >= ? AND at >= ?`
		args = []any{hour, f.EndpointID, f.AppID, f.FromID, micros(f.Since)}
	}
	out, err := collect(ctx, q.q, query+` GROUP BY h ORDER BY h`, args, func(rows sqlstore.Scanner) (hookd.HourCount, error) {
		var (
			h int64
			c hookd.HourCount
		)
		err := rows.Scan(&h, &c.Succeeded, &c.Failed)
		c.Hour = time.UnixMicro(h * hour).UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempts per hour: %w", err)
	}
	return out, nil
}

// EndpointStats counts the endpoint's attempts made in [since, until) by outcome, on the index
// (endpoint_id, id).
func (q *queries) EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*hookd.EndpointStats, error) {
	var stats hookd.EndpointStats
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(success), 0), COUNT(*) - COALESCE(SUM(success), 0)
		FROM hookd_attempts WHERE endpoint_id = ? AND at >= ? AND at < ?`,
		endpointID, micros(since), micros(until)).Scan(&stats.Success, &stats.Fail)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s stats: %w", endpointID, classify(err))
	}
	return &stats, nil
}

// AttemptsByEndpoint counts attempts by endpoint, walking the application's index from f.FromID
// (hookd.EndpointAttemptCounter).
func (q *queries) AttemptsByEndpoint(ctx context.Context, f hookd.AttemptStatsFilter, endpointIDs []string) (map[string]hookd.AttemptCount, error) {
	out := make(map[string]hookd.AttemptCount)
	if len(endpointIDs) == 0 {
		return out, nil
	}
	query := `SELECT endpoint_id, SUM(success), COUNT(*) - SUM(success) FROM hookd_attempts
		WHERE app_id = ? AND id >= ? AND at >= ? AND endpoint_id IN (SELECT value FROM json_each(?))
		GROUP BY endpoint_id`
	_, err := collect(ctx, q.q, query, []any{f.AppID, f.FromID, micros(f.Since), jsonList(endpointIDs)}, func(rows sqlstore.Scanner) (struct{}, error) {
		var (
			id string
			c  hookd.AttemptCount
		)
		err := rows.Scan(&id, &c.Succeeded, &c.Failed)
		out[id] = c
		return struct{}{}, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempts by endpoint: %w", err)
	}
	return out, nil
}
