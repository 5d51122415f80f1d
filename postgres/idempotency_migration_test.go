package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookd/hookd/postgres"
)

// TestIdempotencyDigestMigration: migration 7 keeps the responses an earlier schema stored, which
// read back with no request hash.
func TestIdempotencyDigestMigration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	// Back to the schema before migration 7, with a response stored by it.
	pool := b.store.Pool()
	for _, q := range []string{
		`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`,
		`ALTER TABLE hookd_tokens DROP COLUMN read_only, DROP COLUMN feature_flags`,            // migration 8's
		`DROP INDEX hookd_messages_created_at`,                                                 // migration 9's
		`ALTER TABLE hookd_attempts DROP COLUMN request_headers, DROP COLUMN response_headers`, // migration 10's
		`ALTER TABLE hookd_endpoints DROP COLUMN retry_schedule, DROP COLUMN timeout_ms`,       // migration 11's
		`ALTER TABLE hookd_applications DROP COLUMN retry_schedule, DROP COLUMN timeout_ms`,
		`DROP FUNCTION hookd_acquire_slots`, // migration 12's
		`DROP TABLE hookd_endpoint_slots`,
		`ALTER TABLE hookd_endpoints DROP COLUMN ordered`,                                                                     // migration 13's
		`ALTER TABLE hookd_deliveries DROP COLUMN first_job, DROP COLUMN job_due, DROP COLUMN job_claims, RESET (fillfactor)`, // migration 14's (its index goes with first_job)
		`DROP INDEX hookd_deliveries_endpoint_id_undelivered, hookd_deliveries_endpoint_id_delivered`,                         // migration 15's
		`CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id)`,
		`CREATE INDEX hookd_deliveries_endpoint_id ON hookd_deliveries (endpoint_id, id)`,
		`CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number)`,
		`ALTER TABLE hookd_attempts DROP COLUMN event_type`, // migration 17's (its index goes with it)
		`DROP INDEX hookd_attempts_endpoint_failed, hookd_deliveries_app_id_undelivered, hookd_deliveries_app_id_delivered`,
		`DROP TABLE hookd_endpoint_hours`, // migration 18's
		`DELETE FROM hookd_migrations WHERE version >= 7`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO hookd_idempotency (key, status, body, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		"older", 201, []byte(`{"id":"app_1"}`), now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(context.Background(), b.url, &postgres.Config{Schema: b.schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.GetIdempotentResponse(ctx, "older", now)
	if err != nil || got.Status != 201 || string(got.Body) != `{"id":"app_1"}` || got.RequestHash != nil {
		t.Fatalf("older response after migration: %+v, %v", got, err)
	}
}
