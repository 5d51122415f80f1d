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
	for _, q := range undoFrom(5) {
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
