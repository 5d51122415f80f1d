package sqlite_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestEventTypeFlagsMigration: migration 7 gives an event type written by an earlier schema, with
// only the one feature_flag column, that flag as its list of feature flags.
func TestEventTypeFlagsMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, et := range []hookd.EventType{
		{Name: "flagged", FeatureFlag: "beta", CreatedAt: now, UpdatedAt: now},
		{Name: "open", CreatedAt: now, UpdatedAt: now},
	} {
		if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.UpsertEventType(ctx, &et) }); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the schema before migration 7, as an earlier hookd left it (the later migrations
	// undone too, since they run again).
	for _, q := range []string{
		`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`,
		`ALTER TABLE hookd_event_types DROP COLUMN feature_flags`,
		`ALTER TABLE hookd_event_types DROP COLUMN group_name`,
		`ALTER TABLE hookd_event_types DROP COLUMN deprecated`,
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
		`DELETE FROM hookd_migrations WHERE version >= 7`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	got, err := s.GetEventType(ctx, "flagged")
	if err != nil || got.FeatureFlag != "beta" || !slices.Equal(got.FeatureFlags, []string{"beta"}) || got.Deprecated || got.GroupName != "" {
		t.Fatalf("flagged after migration: %+v, %v", got, err)
	}
	got, err = s.GetEventType(ctx, "open")
	if err != nil || got.FeatureFlag != "" || got.FeatureFlags != nil {
		t.Fatalf("open after migration: %+v, %v", got, err)
	}
}
