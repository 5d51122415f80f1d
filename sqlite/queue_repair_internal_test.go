package sqlite

import (
	"strings"
	"testing"
	"time"
)

// TestRepairPlanReadsPendingDeliveriesOnly plans the queue's repair on a new file (no
// statistics) and on one of 20,000 deliveries, 20 of them pending, after ANALYZE: it walks the
// pending deliveries' index, reads the job table once, and reaches every other row by key.
func TestRepairPlanReadsPendingDeliveriesOnly(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	fill := []string{
		`INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_1', 'a', 0, 0)`,
		`WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 99)
			INSERT INTO hookd_endpoints (id, app_id, url, created_at, updated_at, ordered)
			SELECT 'ep_' || n, 'app_1', 'https://example.com/', 0, 0, n % 2 = 0 FROM g`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 200)
			INSERT INTO hookd_messages (id, app_id, event_type, created_at) SELECT printf('msg_%05d', n), 'app_1', 'x', 0 FROM g`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
			INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts, next_attempt_at, created_at, updated_at)
			SELECT printf('dlv_%06d', n), printf('msg_%05d', (n - 1) / 100 + 1), 'ep_' || (n % 100), 'app_1',
				CASE WHEN n % 1000 = 0 THEN 'pending' ELSE 'delivered' END, 1, CASE WHEN n % 2000 = 0 THEN NULL ELSE 0 END, 0, 0 FROM g`,
		`INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt) VALUES ('retry', 0, 'dlv_001000', 2)`,
		`ANALYZE`,
	}
	for _, filled := range []bool{false, true} {
		if filled {
			for _, q := range fill {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		plan := explain(ctx, t, s, repairJobsSQL, []any{time.Now().UnixMicro()})
		if !strings.Contains(plan, "SCAN d USING INDEX hookd_deliveries_pending") {
			t.Errorf("filled %v: the repair does not walk hookd_deliveries_pending:\n%s", filled, plan)
		}
		for _, line := range strings.Split(plan, "\n") {
			if strings.HasPrefix(line, "SCAN ") && !strings.Contains(line, " INDEX ") && line != "SCAN hookd_jobs" {
				t.Errorf("filled %v: the plan has %q:\n%s", filled, line, plan)
			}
		}
	}
}
