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
	for _, q := range undoFrom(7) {
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
