package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/storetest"
)

// fillHours fills b's schema for the counts' plans: applications app_1, with endpoints ep_000 to
// ep_009, and app_2, with ep_010 to ep_100; 200 messages; an attempt each hour of the 30 days
// before end to each endpoint, one in ten failed, plus 20,000 more to ep_001 in its last two
// days (ids in time order): 92,720 attempts, counted by hour by migration 18's statement, then
// ANALYZE.
func fillHours(ctx context.Context, t testing.TB, pool *pgxpool.Pool, end time.Time) {
	t.Helper()
	fill := `INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', now(), now()), ('app_2', 'b', now(), now());
		INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at)
			SELECT 'ep_' || lpad(g::text, 3, '0'), CASE WHEN g < 10 THEN 'app_1' ELSE 'app_2' END, 'https://example.com/', now(), now()
			FROM generate_series(0, 100) AS g;
		INSERT INTO hookd_messages (id, app_id, event_type, created_at)
			SELECT 'msg_' || lpad(g::text, 5, '0'), 'app_1', 'x', now() FROM generate_series(1, 200) AS g;
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind, url, at, duration_us, status_code, success)
			SELECT 'atmpt_' || lpad(g::text, 6, '0') || '_' || lpad(e::text, 3, '0'), 'dlv_1', 'msg_' || lpad((1 + (g + e) % 200)::text, 5, '0'),
				'ep_' || lpad(e::text, 3, '0'), CASE WHEN e < 10 THEN 'app_1' ELSE 'app_2' END, 1, 'scheduled', 'u',
				$1::timestamptz - interval '30 days' + g * interval '1 hour', 1, 200, (g + e) % 10 <> 0
			FROM generate_series(0, 719) AS g, generate_series(0, 100) AS e;
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind, url, at, duration_us, status_code, success)
			SELECT 'atmpt_' || lpad((672 + g * 864 / 360000)::text, 6, '0') || '_x' || lpad(g::text, 5, '0'), 'dlv_1', 'msg_' || lpad((1 + g % 200)::text, 5, '0'),
				'ep_001', 'app_1', 1, 'scheduled', 'u', $1::timestamptz - interval '2 days' + g * interval '8640 milliseconds', 1, 200, g % 10 <> 0
			FROM generate_series(0, 19999) AS g;
		INSERT INTO hookd_endpoint_hours (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
			SELECT endpoint_id, floor(extract(epoch FROM at) / 3600)::bigint, min(app_id),
				count(*) FILTER (WHERE success), count(*) FILTER (WHERE NOT success), min(id), max(id)
			FROM hookd_attempts GROUP BY 1, 2;
		ANALYZE`
	for _, q := range strings.Split(fill, ";\n") {
		args := []any{}
		if strings.Contains(q, "$1") {
			args = append(args, end)
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestAttemptCountPlans plans the stats, the charts' and the health figures' reads generically
// (as a long-lived connection does) on a filled, analyzed schema: each reads hookd_endpoint_hours
// by its key (an endpoint's hours) or by hookd_endpoint_hours_app (an application's), and the
// partial hours' attempts through hookd_attempts_endpoint_id between a bucket's ids; none scans
// a hookd table whole. Each also returns what a count of the attempts returns.
func TestAttemptCountPlans(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	fillHours(ctx, t, b.store.Pool(), now)
	conn, plans := explainingConn(t, b)
	reads := postgres.ReadsOn(conn)
	stats := reads.(interface {
		EndpointStats(ctx context.Context, endpointID string, since, until time.Time) (*hookd.EndpointStats, error)
	})
	day := hookd.AttemptStatsFilter{AppID: "app_1", Since: now.Add(-24 * time.Hour), FromID: "atmpt_"} // the fill's ids are not hookd's
	const endpointKey, appKey, attemptsKey = "hookd_endpoint_hours_pkey", "hookd_endpoint_hours_app", "hookd_attempts_endpoint_id"
	count := func(where string, args ...any) int {
		var n int
		if err := b.store.Pool().QueryRow(ctx, `SELECT count(*) FROM hookd_attempts WHERE `+where, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		name    string
		indexes []string
		read    func() (int, error)
		want    int
	}{
		{"stats", []string{endpointKey, attemptsKey}, func() (int, error) {
			s, err := stats.EndpointStats(ctx, "ep_001", now.Add(-28*24*time.Hour), now)
			if err != nil {
				return 0, err
			}
			return s.Success + s.Fail, nil
		}, count(`endpoint_id = 'ep_001' AND at >= $1 AND at < $2`, now.Add(-28*24*time.Hour), now)},
		{"endpoint_hours", []string{endpointKey, attemptsKey}, func() (int, error) {
			f := day
			f.EndpointID = "ep_001"
			h, err := reads.AttemptsPerHour(ctx, f)
			return sumHours(h), err
		}, count(`endpoint_id = 'ep_001' AND at >= $1`, day.Since)},
		{"app_hours", []string{appKey, attemptsKey}, func() (int, error) {
			h, err := reads.AttemptsPerHour(ctx, day)
			return sumHours(h), err
		}, count(`app_id = 'app_1' AND at >= $1`, day.Since)},
		{"by_endpoint", []string{endpointKey, attemptsKey}, func() (int, error) {
			m, err := reads.AttemptsByEndpoint(ctx, day, []string{"ep_001", "ep_002"})
			return m["ep_001"].Succeeded + m["ep_001"].Failed + m["ep_002"].Succeeded + m["ep_002"].Failed, err
		}, count(`endpoint_id IN ('ep_001', 'ep_002') AND at >= $1`, day.Since)},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Six runs: from the sixth on, a prepared statement's plan is the generic one.
			for range 6 {
				plans()
				n, err := c.read()
				if err != nil {
					t.Fatal(err)
				}
				if n != c.want {
					t.Fatalf("%d attempts, a count of them %d", n, c.want)
				}
			}
			text := plans()
			if strings.Contains(text, "Seq Scan on hookd_") {
				t.Errorf("the plan scans a whole table:\n%s", text)
			}
			for _, index := range c.indexes {
				if !regexp.MustCompile(`(using|Scan on) ` + index + `\b`).MatchString(text) {
					t.Errorf("the plan does not use %s:\n%s", index, text)
				}
			}
		})
	}
	t.Run("delete_old", func(t *testing.T) {
		plans()
		if _, err := conn.Exec(ctx, postgres.DeleteOldHoursSQL, now.Add(-29*24*time.Hour).Unix()/3600, 1000); err != nil {
			t.Fatal(err)
		}
		text := plans()
		if strings.Contains(text, "Seq Scan on hookd_") || !strings.Contains(text, "hookd_endpoint_hours_hour") {
			t.Errorf("the plan does not walk hookd_endpoint_hours_hour:\n%s", text)
		}
	})
}

// TestAttemptCountsKeptAndDeleted: recording counts attempts by hour as migration 18 counts
// them; deletions and DeleteOldEndpointHours keep and drop the right hours
// (storetest.HourCountsKeptAndDeleted).
func TestAttemptCountsKeptAndDeleted(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	rows := func(hs storetest.HourStore) []string { return hourRows(ctx, t, hs.(*postgres.Store).Pool()) }
	storetest.HourCountsKeptAndDeleted(t, b.store, rows, func() storetest.HourStore {
		if _, err := b.store.Pool().Exec(ctx, `DROP TABLE hookd_endpoint_hours; DELETE FROM hookd_migrations WHERE version = 18`); err != nil {
			t.Fatal(err)
		}
		s, err := postgres.Open(ctx, b.url, &postgres.Config{Schema: b.schema, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// hourRows returns hookd_endpoint_hours, a row a line, by endpoint and hour.
func hourRows(ctx context.Context, t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT endpoint_id, hour, app_id, succeeded, failed, min_id, max_id FROM hookd_endpoint_hours ORDER BY endpoint_id, hour`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ep, app, lo, hi string
		var hour, s, f int64
		if err := rows.Scan(&ep, &hour, &app, &s, &f, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s %d %d %s %s", ep, hour, app, s, f, lo, hi))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
