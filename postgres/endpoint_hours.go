package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// hookd_endpoint_hours (migration 18) counts each endpoint's attempts by the UTC hour they were
// made in (hour = floor(epoch seconds of at / 3600)), kept as attempts are recorded, in the
// record's transaction. The stats, the health figures and the charts read whole hours from it,
// and the partial hour at either end of their window from hookd_attempts. A row also keeps the
// least and greatest id of its attempts: the raw read of a partial hour walks the endpoint's
// (endpoint_id, id) index between the two, whatever the clocks that stamped the attempts' times
// and ids.
//
// The counts follow the attempts: an application's deletion cascades to both. An endpoint's
// deletion leaves both (its attempts still count in its application's chart); retention
// deletes old hours (DeleteOldEndpointHours) as it deletes old messages.

// countHoursSQL adds a batch's buckets to hookd_endpoint_hours, one row each.
const countHoursSQL = `INSERT INTO hookd_endpoint_hours AS c (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])
	ON CONFLICT (endpoint_id, hour) DO UPDATE SET succeeded = c.succeeded + excluded.succeeded,
		failed = c.failed + excluded.failed, min_id = LEAST(c.min_id, excluded.min_id),
		max_id = GREATEST(c.max_id, excluded.max_id)`

// countAttempts adds recs to their endpoints' hours, one upsert a batch.
func (t *txn) countAttempts(ctx context.Context, recs []hookd.AttemptRecord) error {
	bs := sqlstore.FoldHours(recs)
	n := len(bs)
	eps, apps, lows, highs := make(textArray, n), make(textArray, n), make(textArray, n), make(textArray, n)
	hours, succeeded, failed := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, b := range bs {
		eps[i], hours[i], apps[i], succeeded[i], failed[i], lows[i], highs[i] = b.EndpointID, b.Hour, b.AppID, int64(b.Succeeded), int64(b.Failed), b.MinID, b.MaxID
	}
	if _, err := t.c.exec(ctx, countHoursSQL, eps, hours, apps, succeeded, failed, lows, highs); err != nil {
		return fmt.Errorf("record attempts: count by hour: %w", classify(err))
	}
	return nil
}

// edgeCount counts, for each bucket h, its endpoint's attempts that the condition cond (on a)
// selects, walking the endpoint's index between the bucket's least and greatest id: a LATERAL
// subquery, so that the plan is an index range a bucket whatever the planner guesses of how
// many buckets there are (a generic plan cannot know that one or two are). Each attempt is
// counted in its own hour's bucket only, so an id range that reaches into another hour counts
// nothing twice.
func edgeCount(cond string) string {
	return `CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE a.success) AS s, count(*) FILTER (WHERE NOT a.success) AS f
		FROM hookd_attempts a WHERE a.endpoint_id = h.endpoint_id AND a.id >= h.min_id AND a.id <= h.max_id AND ` + cond + `
			AND a.at >= to_timestamp(h.hour * 3600) AND a.at < to_timestamp((h.hour + 1) * 3600)) e`
}

// endpointStatsSQL sums an endpoint's whole hours from the counts and its partial ones, lead and
// trail, from the attempts. Parameters: endpoint, full, fullEnd, lead, trail, since, until.
var endpointStatsSQL = `SELECT COALESCE(sum(s), 0)::bigint, COALESCE(sum(f), 0)::bigint FROM (
	SELECT succeeded AS s, failed AS f FROM hookd_endpoint_hours WHERE endpoint_id = $1 AND hour >= $2 AND hour < $3
	UNION ALL
	SELECT e.s, e.f FROM hookd_endpoint_hours h ` + edgeCount(`a.at >= $6 AND a.at < $7`) + `
	WHERE h.endpoint_id = $1 AND h.hour IN ($4, $5)) t`

// EndpointStats counts the endpoint's attempts made in [since, until) by outcome: whole hours
// from hookd_endpoint_hours, the partial ones from the attempts.
func (q *queries) EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*hookd.EndpointStats, error) {
	var stats hookd.EndpointStats
	sp := sqlstore.SpanOf(since.UnixMicro(), until.UnixMicro())
	err := q.c.queryRow(ctx, endpointStatsSQL, endpointID, sp.Full, sp.FullEnd, sp.Lead, sp.Trail, since, until).
		Scan(&stats.Success, &stats.Fail)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s stats: %w", endpointID, classify(err))
	}
	return &stats, nil
}

// chartSQL is the charts' read: attempts made since a time, of the buckets bucketWhere picks (an
// endpoint's, or an application's, with parameters $1 to $n), summed by key (hour, or
// endpoint_id), also limited to ids at or after a FromID. A bucket after the first, partial hour
// whose least id is at or after FromID is read from the counts; the first hour's, and any whose
// id range FromID cuts (none, while the attempts' times and ids come from one clock), from the
// attempts. Parameters after the bucket's: full, from, first, lead, since.
func chartSQL(key, bucketWhere string, n int) string {
	return fmt.Sprintf(`SELECT %[1]s, sum(s)::bigint, sum(f)::bigint FROM (
	SELECT h.%[1]s AS %[1]s, h.succeeded AS s, h.failed AS f FROM hookd_endpoint_hours h
		WHERE %[2]s AND h.hour >= $%[3]d AND h.min_id >= $%[4]d
	UNION ALL
	SELECT h.%[1]s, e.s, e.f FROM hookd_endpoint_hours h %[8]s
		WHERE %[2]s AND h.hour >= $%[5]d AND (h.hour = $%[6]d OR h.min_id < $%[4]d)
	) t GROUP BY %[1]s HAVING sum(s) + sum(f) > 0 ORDER BY %[1]s`, key, bucketWhere, n+1, n+2, n+3, n+4, n+5,
		edgeCount(fmt.Sprintf(`a.id >= $%d AND a.at >= $%d`, n+2, n+5)))
}

var (
	endpointHoursSQL = chartSQL("hour", `h.endpoint_id = $1 AND h.app_id = $2`, 2)
	appHoursSQL      = chartSQL("hour", `h.app_id = $1`, 1)
	byEndpointSQL    = chartSQL("endpoint_id", `h.endpoint_id = ANY ($1::text[]) AND h.app_id = $2`, 2)
)

// chartArgs are chartSQL's parameters for f, after the bucket's (bucket).
func chartArgs(f hookd.AttemptStatsFilter, bucket ...any) []any {
	since := f.Since.UnixMicro()
	sp := sqlstore.SpanOf(since, since)
	return append(bucket, sp.Full, f.FromID, since/sqlstore.HourMicros, sp.Lead, f.Since)
}

// AttemptsPerHour counts attempts by hour since f.Since: whole hours from hookd_endpoint_hours
// (by endpoint, or by application), the first, partial one from the attempts.
func (q *queries) AttemptsPerHour(ctx context.Context, f hookd.AttemptStatsFilter) ([]hookd.HourCount, error) {
	query, args := appHoursSQL, chartArgs(f, f.AppID)
	if f.EndpointID != "" {
		query, args = endpointHoursSQL, chartArgs(f, f.EndpointID, f.AppID)
	}
	out, err := collect(ctx, q.c, query, args, func(r row) (hookd.HourCount, error) {
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

// AttemptsByEndpoint counts attempts by endpoint since f.Since, as AttemptsPerHour does
// (hookd.EndpointAttemptCounter).
func (q *queries) AttemptsByEndpoint(ctx context.Context, f hookd.AttemptStatsFilter, endpointIDs []string) (map[string]hookd.AttemptCount, error) {
	out := make(map[string]hookd.AttemptCount)
	if len(endpointIDs) == 0 {
		return out, nil
	}
	_, err := collect(ctx, q.c, byEndpointSQL, chartArgs(f, textArray(endpointIDs), f.AppID),
		func(r row) (struct{}, error) {
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

// endpointHoursBatch bounds the rows one statement of DeleteOldEndpointHours deletes.
const endpointHoursBatch = 1000

// deleteOldHoursSQL deletes at most $2 counts of hours before hour $1: the oldest, walking
// hookd_endpoint_hours_hour from its start (ordered, so that a generic plan walks the index and
// stops at the limit or at hour $1, whatever the share of old rows it guesses), then each by
// its row's address.
const deleteOldHoursSQL = `DELETE FROM hookd_endpoint_hours WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM hookd_endpoint_hours WHERE hour < $1 ORDER BY hour LIMIT $2))`

// DeleteOldEndpointHours deletes the attempt counts of the hours that ended at or before before,
// as retention deletes the messages (and attempts) older than it, at most endpointHoursBatch rows
// a statement. It returns how many it deleted.
func (s *Store) DeleteOldEndpointHours(ctx context.Context, before time.Time) (int, error) {
	end := before.UnixMicro() / sqlstore.HourMicros
	total := 0
	for {
		n, err := s.c.exec(ctx, deleteOldHoursSQL, end, endpointHoursBatch)
		if err != nil {
			return total, fmt.Errorf("delete old attempt counts: %w", classify(err))
		}
		total += int(n)
		if n < endpointHoursBatch {
			return total, nil
		}
	}
}
