package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestIdempotencyDigestMigration: migration 9 keeps the responses an earlier schema stored, which
// read back with no request hash.
func TestIdempotencyDigestMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema before migration 9, with a response stored by it.
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, q := range []string{
		`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`,
		`ALTER TABLE hookd_tokens DROP COLUMN read_only`, // migration 10's
		`ALTER TABLE hookd_tokens DROP COLUMN feature_flags`,
		`DROP INDEX hookd_messages_created_at`,                   // migration 11's
		`ALTER TABLE hookd_attempts DROP COLUMN request_headers`, // migration 12's
		`ALTER TABLE hookd_attempts DROP COLUMN response_headers`,
		`ALTER TABLE hookd_endpoints DROP COLUMN retry_schedule`, // migration 13's
		`ALTER TABLE hookd_endpoints DROP COLUMN timeout_ms`,
		`ALTER TABLE hookd_applications DROP COLUMN retry_schedule`,
		`ALTER TABLE hookd_applications DROP COLUMN timeout_ms`,
		`ALTER TABLE hookd_endpoints DROP COLUMN ordered`, // migration 14's
		`DROP INDEX hookd_deliveries_endpoint_failed`,     // migration 15's
		`DROP INDEX hookd_deliveries_endpoint_cancelled`,
		`DROP INDEX hookd_deliveries_endpoint_pending`,
		`CREATE INDEX hookd_deliveries_endpoint_id_status ON hookd_deliveries (endpoint_id, status, id)`,
		`DROP INDEX hookd_deliveries_first_job`,
		`ALTER TABLE hookd_deliveries DROP COLUMN first_job`,
		`DROP INDEX hookd_attempts_endpoint_event_type`, // migration 17's
		`ALTER TABLE hookd_attempts DROP COLUMN event_type`,
		`DROP INDEX hookd_attempts_endpoint_failed`,
		`CREATE INDEX hookd_attempts_delivery_id ON hookd_attempts (delivery_id, number)`,
		`DROP INDEX hookd_deliveries_app_id`,
		`DROP INDEX hookd_deliveries_app_pending`,
		`DROP INDEX hookd_deliveries_app_failed`,
		`DROP INDEX hookd_deliveries_app_cancelled`,
		`DROP TABLE hookd_endpoint_hours`, // migration 18's
		`DELETE FROM hookd_migrations WHERE version >= 9`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO hookd_idempotency (key, status, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		"older", 201, []byte(`{"id":"app_1"}`), now.UnixMicro(), now.Add(time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	got, err := s.GetIdempotentResponse(ctx, "older", now)
	if err != nil || got.Status != 201 || string(got.Body) != `{"id":"app_1"}` || got.RequestHash != nil {
		t.Fatalf("older response after migration: %+v, %v", got, err)
	}
	err = s.InTx(ctx, func(tx hookd.Tx) error {
		return tx.PutIdempotentResponse(ctx, &hookd.IdempotentResponse{Key: "newer", Status: 200, RequestHash: []byte{1, 2}, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
}
