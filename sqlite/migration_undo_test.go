package sqlite_test

import "fmt"

// undoMigrations take a database back to before each migration, newest first. A migration test
// undoes every migration from the one it tests on (undoFrom), so that the later ones run again
// too; a version missing here (8, 16) runs again as it is.
var undoMigrations = []struct {
	version int
	stmts   []string
}{
	{18, []string{`DROP TABLE hookd_endpoint_hours`}},
	{17, []string{
		`DROP INDEX hookd_attempts_endpoint_event_type`,
		`ALTER TABLE hookd_attempts DROP COLUMN event_type`,
		`DROP INDEX hookd_attempts_endpoint_failed`,
		`CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number)`,
		`DROP INDEX hookd_deliveries_app_id`,
		`DROP INDEX hookd_deliveries_app_pending`,
		`DROP INDEX hookd_deliveries_app_failed`,
		`DROP INDEX hookd_deliveries_app_cancelled`,
	}},
	{15, []string{
		`DROP INDEX hookd_deliveries_endpoint_failed`,
		`DROP INDEX hookd_deliveries_endpoint_cancelled`,
		`DROP INDEX hookd_deliveries_endpoint_pending`,
		`CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id)`,
		`DROP INDEX hookd_deliveries_first_job`,
		`ALTER TABLE hookd_deliveries DROP COLUMN first_job`,
	}},
	{14, []string{`ALTER TABLE hookd_endpoints DROP COLUMN ordered`}},
	{13, []string{
		`ALTER TABLE hookd_endpoints DROP COLUMN retry_schedule`,
		`ALTER TABLE hookd_endpoints DROP COLUMN timeout_ms`,
		`ALTER TABLE hookd_applications DROP COLUMN retry_schedule`,
		`ALTER TABLE hookd_applications DROP COLUMN timeout_ms`,
	}},
	{12, []string{
		`ALTER TABLE hookd_attempts DROP COLUMN request_headers`,
		`ALTER TABLE hookd_attempts DROP COLUMN response_headers`,
	}},
	{11, []string{`DROP INDEX hookd_messages_created_at`}},
	{10, []string{
		`ALTER TABLE hookd_tokens DROP COLUMN read_only`,
		`ALTER TABLE hookd_tokens DROP COLUMN feature_flags`,
	}},
	{9, []string{`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`}},
	{7, []string{
		`ALTER TABLE hookd_event_types DROP COLUMN feature_flags`,
		`ALTER TABLE hookd_event_types DROP COLUMN group_name`,
		`ALTER TABLE hookd_event_types DROP COLUMN deprecated`,
	}},
}

// undoFrom returns the statements that take the schema back to before migration v, as an
// earlier hookd left it, and forget v and every later migration.
func undoFrom(v int) []string {
	var out []string
	for _, u := range undoMigrations {
		if u.version >= v {
			out = append(out, u.stmts...)
		}
	}
	return append(out, fmt.Sprintf(`DELETE FROM hookd_migrations WHERE version >= %d`, v))
}
