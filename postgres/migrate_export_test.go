package postgres

import (
	"context"

	"github.com/hookd/hookd/internal/migrations"
)

// PendingMigrations returns the migrations Open would apply to s's schema, applying none, or the
// error it would refuse the schema with.
func PendingMigrations(ctx context.Context, s *Store) ([]migrations.Migration, error) {
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return nil, err
	}
	recorded, err := readMigrations(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	plan, err := migrations.Decide(known, recorded, uncheckedVersions)
	return plan.Pending, err
}
