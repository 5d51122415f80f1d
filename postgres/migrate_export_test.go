package postgres

import (
	"context"

	"github.com/hookd/hookd/internal/migrations"
)

// PendingMigrations is schemaStatus on s's pool.
func PendingMigrations(ctx context.Context, s *Store) ([]migrations.Migration, error) {
	return schemaStatus(ctx, s.pool)
}
