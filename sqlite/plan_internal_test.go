package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// planStatements are the statements over hookd_deliveries that read by endpoint or by status, and
// the queue's, each with the index it must reach its rows through. The reads of package sqlstore
// are written out here as that package builds them for SQLite.
var planStatements = []struct {
	name, sql, index string
	args             []any
	groups           bool // may sort its rows to group them (the pending summary: pending rows only)
}{
	{"pending_summary", pendingSummarySQL, "hookd_deliveries_endpoint_pending", nil, true},
	{"first_pending", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'pending' ORDER BY d.id LIMIT 1`, "hookd_deliveries_endpoint_pending", []any{"ep_1"}, false},
	{"park", `SELECT e.ordered, EXISTS (SELECT 1 FROM hookd_deliveries d
		WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.id < ?) FROM hookd_endpoints e WHERE e.id = ?`,
		"hookd_deliveries_endpoint_pending", []any{"dlv_9", "ep_1"}, false},
	{"parked", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'pending' AND d.id > ? AND d.next_attempt_at IS NULL
		ORDER BY d.id LIMIT ?`, "hookd_deliveries_endpoint_pending", []any{"ep_1", "", 100}, false},
	{"due", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.status = 'pending' AND d.id > ? AND COALESCE(d.next_attempt_at, d.created_at) <= ?
		ORDER BY d.id LIMIT ?`, "hookd_deliveries_pending", []any{"", 0, 100}, false},
	{"list_endpoint", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.id > ? ORDER BY d.id LIMIT 51`, "hookd_deliveries_endpoint_id", []any{"ep_1", ""}, false},
	{"fetch_own_jobs", fetchOwnJobsSQL, "hookd_deliveries_first_job", []any{100}, false},
	{"enqueue", insertJobsSQL(2), "sqlite_autoindex_hookd_deliveries_1", []any{"first", 0, "dlv_1", 1, "scheduled", nil, true,
		"retry", 0, "dlv_2", 2, "scheduled", nil, false}, false},
	{"list_endpoint_delivered", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'delivered' AND d.id > ? ORDER BY d.id LIMIT 51`, "hookd_deliveries_endpoint_id", []any{"ep_1", ""}, false},
	{"list_endpoint_pending", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'pending' AND d.id > ? ORDER BY d.id LIMIT 51`, "hookd_deliveries_endpoint_pending", []any{"ep_1", ""}, false},
	{"list_endpoint_failed", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'failed' AND d.id > ? ORDER BY d.id LIMIT 51`, "hookd_deliveries_endpoint_failed", []any{"ep_1", ""}, false},
	{"list_endpoint_cancelled", `SELECT ` + deliveryCols + ` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'cancelled' AND d.id < ? ORDER BY d.id DESC LIMIT 51`, "hookd_deliveries_endpoint_cancelled", []any{"ep_1", "dlv_999999"}, false},
}

// TestDeliveryPlansUseIndexes plans each statement of planStatements on a new file (no
// statistics) and on one with deliveries over many endpoints after ANALYZE: each must read
// hookd_deliveries through its index, never by a scan of the table (its own VALUES aside), and
// never sort.
func TestDeliveryPlansUseIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	fill := []string{
		`INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', 0, 0)`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 200)
			INSERT INTO hookd_messages (id, app_id, event_type, created_at) SELECT printf('msg_%05d', n), 'app_1', 'x', 0 FROM g`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
			INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, created_at, updated_at)
			SELECT printf('dlv_%06d', n), printf('msg_%05d', (n - 1) / 100 + 1), printf('ep_%03d', n % 100), 'app_1',
				CASE WHEN n % 50 = 0 THEN 'pending' WHEN n % 7 = 0 THEN 'failed' WHEN n % 11 = 0 THEN 'cancelled' ELSE 'delivered' END, 0, 0 FROM g`,
		`ANALYZE`,
	}
	for round, filled := range []bool{false, true} {
		if filled {
			for _, q := range fill {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		for _, st := range planStatements {
			t.Run(fmt.Sprintf("%s/%d", st.name, round), func(t *testing.T) {
				plan := explain(ctx, t, s, st.sql, st.args)
				if !strings.Contains(plan, st.index) {
					t.Errorf("plan does not use %s:\n%s", st.index, plan)
				}
				for _, line := range strings.Split(plan, "\n") {
					sorts := strings.Contains(line, "TEMP B-TREE") && !(st.groups && strings.Contains(line, "FOR GROUP BY"))
					scans := strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, " INDEX ") &&
						line != "SCAN eps" && line != "SCAN CONSTANT ROW" && !strings.HasSuffix(line, "VALUES CLAUSE")
					if sorts || scans {
						t.Errorf("plan has %q:\n%s", line, plan)
					}
				}
			})
		}
	}
}

// explain returns the query plan of query, one step a line.
func explain(ctx context.Context, t *testing.T, s *Store, query string, args []any) string {
	t.Helper()
	rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// openTestStore opens a store on a new file of t's, closed when t ends.
func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
