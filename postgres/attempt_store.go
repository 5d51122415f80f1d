package postgres

import (
	"context"
	"fmt"
	"time"

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

// AttemptsPerHour counts attempts by hour, walking the application's (or the endpoint's) index
// from f.FromID.
func (q *queries) AttemptsPerHour(ctx context.Context, f hookd.AttemptStatsFilter) ([]hookd.HourCount, error) {
	where := `a.app_id = $1 AND a.id >= $2 AND a.at >= $3`
	args := []any{f.AppID, f.FromID, f.Since}
	if f.EndpointID != "" {
		where = `a.endpoint_id = $4 AND ` + where
		args = append(args, f.EndpointID)
	}
	out, err := collect(ctx, q.c, `SELECT floor(extract(epoch FROM a.at) / 3600)::bigint AS h,
		count(*) FILTER (WHERE a.success), count(*) FILTER (WHERE NOT a.success)
		FROM hookd_attempts a WHERE `+where+` GROUP BY h ORDER BY h`, args, func(r row) (hookd.HourCount, error) {
		var (
			h int64
			c hookd.HourCount
		)
		if err := r.Scan(&h, &c.Succeeded, &c.Failed); err != nil {
			return c, err
		}
		c.Hour = time.Unix(h*3600, 0).UTC()
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("attempts per hour: %w", classify(err))
	}
	return out, nil
}

// EndpointStats counts the endpoint's attempts made in [since, until) by outcome, on the index
// (endpoint_id, id).
func (q *queries) EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*hookd.EndpointStats, error) {
	stats, err := collect(ctx, q.c, `SELECT count(*) FILTER (WHERE a.success), count(*) FILTER (WHERE NOT a.success)
		FROM hookd_attempts a WHERE a.endpoint_id = $1 AND a.at >= $2 AND a.at < $3`,
		[]any{endpointID, since, until}, func(r row) (hookd.EndpointStats, error) {
			var s hookd.EndpointStats
			err := r.Scan(&s.Success, &s.Fail)
			return s, err
		})
	if err != nil {
		return nil, fmt.Errorf("endpoint %s stats: %w", endpointID, classify(err))
	}
	return &stats[0], nil
}

// AttemptsByEndpoint counts attempts by endpoint, walking the application's index from f.FromID
// (hookd.EndpointAttemptCounter).
func (q *queries) AttemptsByEndpoint(ctx context.Context, f hookd.AttemptStatsFilter, endpointIDs []string) (map[string]hookd.AttemptCount, error) {
	out := make(map[string]hookd.AttemptCount)
	if len(endpointIDs) == 0 {
		return out, nil
	}
	_, err := collect(ctx, q.c, `SELECT a.endpoint_id,
		count(*) FILTER (WHERE a.success), count(*) FILTER (WHERE NOT a.success)
		FROM hookd_attempts a WHERE a.app_id = $1 AND a.id >= $2 AND a.at >= $3 AND a.endpoint_id = ANY ($4)
		GROUP BY a.endpoint_id`, []any{f.AppID, f.FromID, f.Since, endpointIDs}, func(r row) (struct{}, error) {
		var (
			id string
			c  hookd.AttemptCount
		)
		err := r.Scan(&id, &c.Succeeded, &c.Failed)
		out[id] = c
		return struct{}{}, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempts by endpoint: %w", classify(err))
	}
	return out, nil
}
