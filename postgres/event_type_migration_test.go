package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
)

// TestEventTypeFlagsMigration: migration 5 gives an event type written by an earlier schema, with
// only the one feature_flag column, that flag as its list of feature flags.
func TestEventTypeFlagsMigration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, et := range []hookd.EventType{
		{Name: "flagged", FeatureFlag: "beta", CreatedAt: now, UpdatedAt: now},
		{Name: "open", CreatedAt: now, UpdatedAt: now},
	} {
		if err := b.store.InTx(ctx, func(tx hookd.Tx) error { return tx.UpsertEventType(ctx, &et) }); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the schema before migration 5, as an earlier hookd left it (the later migrations
	// undone too, since they run again).
	pool := b.store.Pool()
	for _, q := range []string{
		`ALTER TABLE hookd_idempotency DROP COLUMN request_hash`,
		`ALTER TABLE hookd_event_types DROP COLUMN feature_flags, DROP COLUMN group_name, DROP COLUMN deprecated`,
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
		`DELETE FROM hookd_migrations WHERE version >= 5`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := postgres.Open(context.Background(), b.url, &postgres.Config{Schema: b.schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.GetEventType(ctx, "flagged")
	if err != nil || got.FeatureFlag != "beta" || !slices.Equal(got.FeatureFlags, []string{"beta"}) || got.Deprecated || got.GroupName != "" {
		t.Fatalf("flagged after migration: %+v, %v", got, err)
	}
	got, err = s.GetEventType(ctx, "open")
	if err != nil || got.FeatureFlag != "" || got.FeatureFlags != nil {
		t.Fatalf("open after migration: %+v, %v", got, err)
	}
}
