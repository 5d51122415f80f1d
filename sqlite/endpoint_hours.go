package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// hookd_endpoint_hours (migration 18) counts each endpoint's attempts by the UTC hour they were
// made in (hour = at / sqlstore.HourMicros), kept as attempts are recorded, in the record's transaction.
// The stats, the health figures and the charts read whole hours from it, and the partial hour
// at either end of their window from hookd_attempts. A row also keeps the least and greatest id
// of its attempts: the raw read of a partial hour walks the endpoint's (endpoint_id, id) index
// between the two, whatever the clocks that stamped the attempts' times and ids.
//
// The counts follow the attempts: an application's deletion cascades to both. An endpoint's
// deletion leaves both (its attempts still count in its application's chart); retention
// deletes old hours (DeleteOldEndpointHours) as it deletes old messages.

// hourRowParams are a bucket's parameters in countHoursSQL.
const hourRowParams = 7

// countHoursSQL adds rows buckets to hookd_endpoint_hours, one row each; prepared at Open for each
// of batchSizes, as the record's other statements are.
func countHoursSQL(rows int) string {
	return `INSERT INTO hookd_endpoint_hours (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
		VALUES ` + valuesList(rows, hourRowParams) + `
		ON CONFLICT (endpoint_id, hour) DO UPDATE SET succeeded = succeeded + excluded.succeeded,
			failed = failed + excluded.failed, min_id = min(min_id, excluded.min_id), max_id = max(max_id, excluded.max_id)`
}

// countAttempts adds recs to their endpoints' hours, a bucket a row of the fewest statements.
func (t *txn) countAttempts(ctx context.Context, recs []hookd.AttemptRecord) error {
	bs := sqlstore.FoldHours(recs)
	args := make([]any, 0, hourRowParams*len(bs))
	for _, b := range bs {
		args = append(args, b.EndpointID, b.Hour, b.AppID, b.Succeeded, b.Failed, b.MinID, b.MaxID)
	}
	if _, err := t.execBatch(ctx, t.stmts.countHours, hourRowParams, args); err != nil {
		return fmt.Errorf("record attempts: count by hour: %w", classify(err))
	}
	return nil
}

// hourBounds is the SQL that keeps a.at within the hour of the bucket h it is matched to.
var hourBounds = fmt.Sprintf(`a.at >= h.hour * %[1]d AND a.at < (h.hour + 1) * %[1]d`, sqlstore.HourMicros)

// bucketJoin matches each bucket h to its endpoint's attempts a, walking the endpoint's index
// between the bucket's least and greatest id. Each attempt is matched to its own hour's bucket
// only (hourBounds), so an id range that reaches into another hour counts nothing twice.
const bucketJoin = `FROM hookd_endpoint_hours h JOIN hookd_attempts a ON a.endpoint_id = h.endpoint_id AND a.id >= h.min_id AND a.id <= h.max_id`

// endpointStatsSQL sums an endpoint's whole hours from the counts and its partial ones, lead and
// trail, from the attempts. Parameters: endpoint, full, fullEnd, endpoint, lead, trail, since,
// until.
var endpointStatsSQL = `SELECT COALESCE(SUM(s), 0), COALESCE(SUM(f), 0) FROM (
	SELECT succeeded AS s, failed AS f FROM hookd_endpoint_hours WHERE endpoint_id = ? AND hour >= ? AND hour < ?
	UNION ALL
	SELECT a.success, 1 - a.success ` + bucketJoin + `
	WHERE h.endpoint_id = ? AND h.hour IN (?, ?) AND a.at >= ? AND a.at < ? AND ` + hourBounds + `)`

// EndpointStats counts the endpoint's attempts made in [since, until) by outcome: whole hours
// from hookd_endpoint_hours, the partial ones from the attempts.
func (q *queries) EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*hookd.EndpointStats, error) {
	var stats hookd.EndpointStats
	from, to := micros(since), micros(until)
	sp := sqlstore.SpanOf(from, to)
	err := q.q.QueryRowContext(ctx, endpointStatsSQL, endpointID, sp.Full, sp.FullEnd,
		endpointID, sp.Lead, sp.Trail, from, to).Scan(&stats.Success, &stats.Fail)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s stats: %w", endpointID, classify(err))
	}
	return &stats, nil
}

// chartSQL is the charts' read: attempts made since a time, of the buckets bucketWhere picks (an
// endpoint's, or an application's), summed by key (hour, or endpoint_id), also limited to ids
// at or after a FromID. A bucket after the first, partial hour whose least id is at or after
// FromID is read from the counts; the first hour's, and any whose id range FromID cuts (none,
// while the attempts' times and ids come from one clock), from the attempts. Parameters: the
// bucket's twice, then full, from, first, lead, from, from, since.
func chartSQL(key, bucketWhere string) string {
	return `SELECT ` + key + `, SUM(s), SUM(f) FROM (
	SELECT h.` + key + ` AS ` + key + `, h.succeeded AS s, h.failed AS f FROM hookd_endpoint_hours h
		WHERE ` + bucketWhere + ` AND h.hour >= ? AND h.min_id >= ?
	UNION ALL
	SELECT h.` + key + `, a.success, 1 - a.success ` + bucketJoin + `
		WHERE ` + bucketWhere + ` AND h.hour >= ? AND (h.hour = ? OR h.min_id < ?)
			AND a.id >= ? AND a.at >= ? AND ` + hourBounds + `
	) GROUP BY ` + key + ` ORDER BY ` + key
}

var (
	endpointHoursSQL = chartSQL("hour", `h.endpoint_id = ? AND h.app_id = ?`)
	appHoursSQL      = chartSQL("hour", `h.app_id = ?`)
	byEndpointSQL    = chartSQL("endpoint_id", `h.endpoint_id IN (SELECT value FROM json_each(?)) AND h.app_id = ?`)
)

// chartArgs are chartSQL's parameters for f, after the bucket's (bucket).
func chartArgs(f hookd.AttemptStatsFilter, bucket ...any) []any {
	since := micros(f.Since)
	sp := sqlstore.SpanOf(since, since)
	args := append(append([]any{}, bucket...), sp.Full, f.FromID)
	args = append(args, bucket...)
	return append(args, since/sqlstore.HourMicros, sp.Lead, f.FromID, f.FromID, since)
}

// AttemptsPerHour counts attempts by hour since f.Since: whole hours from hookd_endpoint_hours
// (by endpoint, or by application), the first, partial one from the attempts.
func (q *queries) AttemptsPerHour(ctx context.Context, f hookd.AttemptStatsFilter) ([]hookd.HourCount, error) {
	query, args := appHoursSQL, chartArgs(f, f.AppID)
	if f.EndpointID != "" {
		query, args = endpointHoursSQL, chartArgs(f, f.EndpointID, f.AppID)
	}
	out, err := collect(ctx, q.q, query, args, func(rows sqlstore.Scanner) (hookd.HourCount, error) {
		var (
			h int64
			c hookd.HourCount
		)
		err := rows.Scan(&h, &c.Succeeded, &c.Failed)
		c.Hour = time.UnixMicro(h * sqlstore.HourMicros).UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("attempts per hour: %w", err)
	}
	return out, nil
}

// AttemptsByEndpoint counts attempts by endpoint since f.Since, as AttemptsPerHour does
// (hookd.EndpointAttemptCounter).
func (q *queries) AttemptsByEndpoint(ctx context.Context, f hookd.AttemptStatsFilter, endpointIDs []string) (map[string]hookd.AttemptCount, error) {
	out := make(map[string]hookd.AttemptCount)
	if len(endpointIDs) == 0 {
		return out, nil
	}
	_, err := collect(ctx, q.q, byEndpointSQL, chartArgs(f, jsonList(endpointIDs), f.AppID),
		func(rows sqlstore.Scanner) (struct{}, error) {
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

// endpointHoursBatch bounds the rows one transaction of DeleteOldEndpointHours deletes, so that
// a first run on an old database holds the write connection a few milliseconds at a time.
const endpointHoursBatch = 1000

// DeleteOldEndpointHours deletes the attempt counts of the hours that ended at or before before,
// as retention deletes the messages (and attempts) older than it, in transactions of at most
// endpointHoursBatch rows, each a background write. It returns how many it deleted.
func (s *Store) DeleteOldEndpointHours(ctx context.Context, before time.Time) (int, error) {
	end := micros(before) / sqlstore.HourMicros
	total := 0
	for {
		var n int64
		err := s.InTx(hookd.BackgroundWrite(ctx), func(tx hookd.Tx) error {
			res, err := tx.(*txn).sqlTx.ExecContext(ctx, `DELETE FROM hookd_endpoint_hours WHERE (endpoint_id, hour) IN (
				SELECT endpoint_id, hour FROM hookd_endpoint_hours WHERE hour < ? ORDER BY hour LIMIT ?)`, end, endpointHoursBatch)
			if err != nil {
				return classify(err)
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("delete old attempt counts: %w", err)
		}
		total += int(n)
		if n < endpointHoursBatch {
			return total, nil
		}
	}
}
