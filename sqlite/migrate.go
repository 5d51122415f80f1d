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

// adoptRiverJobs moves the delivery jobs that an earlier hookd left in River's table (river_job,
// when hookd ran on River in this file) into hookd_jobs, in one transaction: jobs not yet
// finalized become due at once (or at their NotBefore), keeping their lane and attempt. River's
// tables stay, holding whatever else they hold. A file without river_job is left alone.
func adoptRiverJobs(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'river_job'`).Scan(&n); err != nil {
		return fmt.Errorf("adopt river jobs: %w", err)
	}
	if n == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("adopt river jobs: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	const pending = `kind = 'hookd_attempt' AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`
	now := time.Now().UnixMicro()
	res, err := tx.ExecContext(ctx, `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
		SELECT CASE queue WHEN 'hookd_retry' THEN 'retry' WHEN 'hookd_manual' THEN 'manual' ELSE 'first' END,
			MAX(?, COALESCE(json_extract(args, '$.nb'), 0)),
			json_extract(args, '$.d'), json_extract(args, '$.a'), COALESCE(json_extract(args, '$.t'), ''),
			json_extract(args, '$.nb')
		FROM river_job WHERE `+pending+` AND json_extract(args, '$.d') IS NOT NULL ORDER BY id`, now)
	if err != nil {
		return fmt.Errorf("adopt river jobs: copy: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM river_job WHERE `+pending); err != nil {
		return fmt.Errorf("adopt river jobs: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("adopt river jobs: commit: %w", err)
	}
	if moved, _ := res.RowsAffected(); moved > 0 {
		logger.InfoContext(ctx, "hookd jobs moved from River's table to hookd_jobs", "jobs", moved)
	}
	return nil
}
