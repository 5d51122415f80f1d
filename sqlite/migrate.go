package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookd/hookd/internal/migrations"
)

// migrationFiles are hookd's schema changes, named NNNN_what.sql and applied in the order of NNNN.
// A released file never changes; a change to the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies hookd's pending migrations in one transaction, recording each in
// hookd_migrations. The transaction takes the write lock first (_txlock=immediate), so two
// processes opening one new file apply the migrations once.
func migrate(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	all, err := migrations.Load(migrationFiles)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS hookd_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("migrate: create hookd_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM hookd_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	applied := 0
	for _, m := range all {
		if m.Version <= current {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO hookd_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
		logger.InfoContext(ctx, "hookd migration applied", "version", m.Version, "name", m.Name)
		applied++
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	if applied == 0 && len(all) > 0 && current > all[len(all)-1].Version {
		logger.WarnContext(ctx, "hookd schema is newer than this build", "schema_version", current)
	}
	return nil
}
