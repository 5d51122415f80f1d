package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
	"github.com/hookd/hookd/storetest"
)

// fillHoursSQL fills a database for the counts' plans: applications app_1, with endpoints
// ep_000 to ep_009, and app_2, with ep_010 to ep_100; 200 messages; and an attempt each hour of
// 30 days to each endpoint, one in ten failed, plus 20,000 more to ep_001 in its last two days
// (ids in time order): 92,720 attempts, counted by hour by migration 18's statement, then
// ANALYZE.
var fillHoursSQL = []string{
	`INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', 0, 0), ('app_2', 'b', 0, 0)`,
	`WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 100)
		INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at)
		SELECT printf('ep_%03d', n), CASE WHEN n < 10 THEN 'app_1' ELSE 'app_2' END, 'https://example.com/', 0, 0 FROM g`,
	`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 200)
		INSERT INTO hookd_messages (id, app_id, event_type, created_at) SELECT printf('msg_%05d', n), 'app_1', 'x', 0 FROM g`,
	`WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 719),
		e(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM e WHERE n < 100)
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind, url, at, duration, status_code, success)
		SELECT printf('atmpt_%012d_%03d', ?1 + g.n * 3600000000, e.n), 'dlv_1', printf('msg_%05d', 1 + (g.n + e.n) % 200), printf('ep_%03d', e.n),
			CASE WHEN e.n < 10 THEN 'app_1' ELSE 'app_2' END, 1, 'scheduled', 'u', ?1 + g.n * 3600000000, 1, 200, (g.n + e.n) % 10 <> 0
		FROM g, e`,
	`WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 19999)
		INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind, url, at, duration, status_code, success)
		SELECT printf('atmpt_%012d_x%05d', ?2 + n * 8640000, n), 'dlv_1', printf('msg_%05d', 1 + n % 200), 'ep_001', 'app_1', 1, 'scheduled', 'u',
			?2 + n * 8640000, 1, 200, n % 10 <> 0 FROM g`,
	`INSERT INTO hookd_endpoint_hours (endpoint_id, hour, app_id, succeeded, failed, min_id, max_id)
		SELECT endpoint_id, at / 3600000000, min(app_id), sum(success), count(*) - sum(success), min(id), max(id)
		FROM hookd_attempts GROUP BY endpoint_id, at / 3600000000`,
	`ANALYZE`,
}

// fillHours fills s with fillHoursSQL; the attempts' 30 days end at end.
func fillHours(ctx context.Context, t testing.TB, db *sql.DB, end time.Time) {
	t.Helper()
	start := micros(end) - 30*24*sqlstore.HourMicros
	for _, q := range fillHoursSQL {
		if _, err := db.ExecContext(ctx, q, start, micros(end)-2*24*sqlstore.HourMicros); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestAttemptCountPlansUseIndexes plans the stats, the charts' and the health figures' reads on
// a filled, analyzed database: each reads hookd_endpoint_hours by its key (an endpoint's hours) or
// by hookd_endpoint_hours_app (an application's), and the partial hours' attempts through
// hookd_attempts_endpoint_id between a bucket's ids; none scans a table or sorts anything but
// its few groups.
func TestAttemptCountPlansUseIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	now := time.Now()
	fillHours(ctx, t, s.db, now)
	since := now.Add(-28 * 24 * time.Hour)
	sp := sqlstore.SpanOf(micros(since), micros(now))
	f := hookd.AttemptStatsFilter{AppID: "app_1", EndpointID: "ep_001", Since: now.Add(-24 * time.Hour), FromID: "atmpt_"} // the fill's ids are not hookd's
	const endpointKey, attemptsKey = "USING PRIMARY KEY (endpoint_id=? AND hour>?", "USING INDEX hookd_attempts_endpoint_id (endpoint_id=? AND id>? AND id<?)"
	for _, st := range []struct {
		name, sql string
		args      []any
		want      []string
	}{
		{"stats", endpointStatsSQL, []any{"ep_001", sp.Full, sp.FullEnd, "ep_001", sp.Lead, sp.Trail, micros(since), micros(now)},
			[]string{endpointKey, "USING PRIMARY KEY (endpoint_id=? AND hour=?)", attemptsKey}},
		{"endpoint_hours", endpointHoursSQL, chartArgs(f, f.EndpointID, f.AppID), []string{endpointKey, attemptsKey}},
		{"app_hours", appHoursSQL, chartArgs(f, f.AppID), []string{"USING INDEX hookd_endpoint_hours_app (app_id=? AND hour>?)", attemptsKey}},
		{"by_endpoint", byEndpointSQL, chartArgs(f, jsonList([]string{"ep_001", "ep_002"}), f.AppID), []string{endpointKey, attemptsKey}},
		{"delete_old", `DELETE FROM hookd_endpoint_hours WHERE (endpoint_id, hour) IN (
			SELECT endpoint_id, hour FROM hookd_endpoint_hours WHERE hour < ? ORDER BY hour LIMIT ?)`, []any{sp.Full, 1000},
			[]string{"USING COVERING INDEX hookd_endpoint_hours_hour (hour<?)"}},
	} {
		t.Run(st.name, func(t *testing.T) {
			plan := explain(ctx, t, s, st.sql, st.args)
			for _, want := range st.want {
				if !strings.Contains(plan, want) {
					t.Errorf("plan does not read %s:\n%s", want, plan)
				}
			}
			for _, line := range strings.Split(plan, "\n") {
				line = strings.TrimSpace(line)
				scans := strings.HasPrefix(line, "SCAN ") && !strings.HasPrefix(line, "SCAN json_each") &&
					!strings.HasPrefix(line, "SCAN (subquery") && !strings.Contains(line, "VIRTUAL TABLE")
				sorts := strings.Contains(line, "TEMP B-TREE") && !strings.Contains(line, "GROUP BY") && !strings.Contains(line, "ORDER BY")
				if scans || sorts {
					t.Errorf("plan has %q:\n%s", line, plan)
				}
			}
		})
	}
}

// TestAttemptCountsKeptAndDeleted: recording counts attempts by hour as migration 18 counts
// them; deletions and DeleteOldEndpointHours keep and drop the right hours
// (storetest.HourCountsKeptAndDeleted).
func TestAttemptCountsKeptAndDeleted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := t.TempDir() + "/hookd.db"
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	rows := func(hs storetest.HourStore) []string { return hourRows(ctx, t, hs.(*Store).db) }
	storetest.HourCountsKeptAndDeleted(t, s, rows, func() storetest.HourStore {
		for _, q := range []string{`DROP TABLE hookd_endpoint_hours`, `DELETE FROM hookd_migrations WHERE version = 18`} {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if s, err = Open(ctx, path, nil); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// hourRows returns hookd_endpoint_hours, a row a line, by endpoint and hour.
func hourRows(ctx context.Context, t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT endpoint_id, hour, app_id, succeeded, failed, min_id, max_id FROM hookd_endpoint_hours ORDER BY endpoint_id, hour`)
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
