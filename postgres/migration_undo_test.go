package postgres_test

import "fmt"

// undoMigrations take a database back to before each migration, newest first. A migration test
// undoes every migration from the one it tests on (undoFrom), so that the later ones run again
// too; a version missing here (6, 16, 19) runs again as it is.
var undoMigrations = []struct {
	version int
	stmts   []string
}{
	{18, []string{`DROP TABLE hookd_endpoint_hours`}},
	{17, []string{
		`ALTER TABLE hookd_attempts DROP COLUMN event_type`, // its index goes with it
		`DROP INDEX hookd_attempts_endpoint_failed, hookd_deliveries_app_id_undelivered, hookd_deliveries_app_id_delivered`,
	}},
	{15, []string{
		`DROP INDEX hookd_deliveries_endpoint_id_undelivered, hookd_deliveries_endpoint_id_delivered`,
		`CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id)`,
		`CREATE INDEX hookd_deliveries_endpoint_id ON hookd_deliveries (endpoint_id, id)`,
		`CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number)`,
	}},
	// Its index goes with first_job.
	{14, []string{`ALTER TABLE hookd_deliveries DROP COLUMN first_job, DROP COLUMN job_due, DROP COLUMN job_claims, RESET (fillfactor)`}},
	{13, []string{`ALTER TABLE hookd_endpoints DROP COLUMN ordered`}},
	{12, []string{`DROP FUNCTION hookd_acquire_slots`, `DROP TABLE hookd_endpoint_slots`}},
	{11, []string{
		`ALTER TABLE hookd_endpoints DROP COLUMN retry_schedule, DROP COLUMN timeout_ms`,
		`ALTER TABLE hookd_applications DROP COLUMN retry_schedule, DROP COLUMN timeout_ms`,
	}},
	{10, []string{`ALTER TABLE hookd_attempts DROP COLUMN request_headers, DROP COLUMN response_headers`}},
	{9, []string{`DROP INDEX hookd_messages_created_at`}},
	{8, []string{`ALTER TABLE hookd_tokens DROP COLUMN read_only, DROP COLUMN feature_flags`}},
	{7, []string{`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`}},
	{5, []string{`ALTER TABLE hookd_event_types DROP COLUMN feature_flags, DROP COLUMN group_name, DROP COLUMN deprecated`}},
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
