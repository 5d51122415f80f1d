package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"log/slog"

	"github.com/hookd/hookd/internal/migrations"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// migrationFiles are hookd's schema changes, named NNNN_what.sql and applied in the order of NNNN.
// A released file never changes; a change to the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate brings hookd's schema of the database at url up to date and returns; Open does the
// same before it returns a Store. River's tables are not hookd's: NewRiverQueue creates them,
// and only that. cfg's Schema and Logger apply (nil: defaults).
func Migrate(ctx context.Context, url string, cfg *Config) error {
	cfg = cfg.withDefaults()
	pc, err := poolConfig(url, cfg)
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	pc.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool, cfg); err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	return nil
}

// migrate creates cfg.Schema if it is missing and applies hookd's pending migrations in one
// transaction, while it holds the schema's migration lock (withMigrationLock).
func migrate(ctx context.Context, pool *pgxpool.Pool, cfg *Config) error {
	return withMigrationLock(ctx, pool, cfg.Schema, func(lockConn *pgx.Conn) error {
		if cfg.Schema != "" {
			if _, err := lockConn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{cfg.Schema}.Sanitize()); err != nil {
				return fmt.Errorf("migrate: create schema %s: %w", cfg.Schema, err)
			}
		}
		return migrateHookd(ctx, lockConn, cfg.Logger)
	})
}

// migrateRiverLocked applies River's pending migrations while it holds the schema's migration
// lock: River queues that start at once migrate once.
func migrateRiverLocked(ctx context.Context, pool *pgxpool.Pool, schema string, logger *slog.Logger) error {
	return withMigrationLock(ctx, pool, schema, func(*pgx.Conn) error {
		return migrateRiver(ctx, pool, logger)
	})
}

// withMigrationLock runs fn while it holds an advisory lock of the schema on a connection of
// its own (given to fn): processes that start at once wait for the first, and then find nothing
// to do.
//
// The lock is held by the session, not a transaction (pg_advisory_xact_lock), because River's
// migrations cannot share one transaction (a later one uses an enum value an earlier one adds)
// and rivermigrate commits each in a transaction of its own on the pool. Closing the connection
// releases the lock, also when the process dies.
func withMigrationLock(ctx context.Context, pool *pgxpool.Pool, schema string, fn func(lockConn *pgx.Conn) error) error {
	lockConn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer lockConn.Close(context.WithoutCancel(ctx))
	if _, err := lockConn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey(schema)); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	return fn(lockConn)
}

// migrationLockKey is the advisory lock key of migrations into schema: a hash of the schema's
// name, so that installations in different schemas of one database migrate side by side.
func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("hookd migrations\x00" + schema))
	return int64(h.Sum64())
}

// migrateHookd applies hookd's pending migrations in one transaction, recording each in
// hookd_migrations.
func migrateHookd(ctx context.Context, conn *pgx.Conn, logger *slog.Logger) error {
	all, err := migrations.Load(migrationFiles)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS hookd_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("migrate: create hookd_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM hookd_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: read version: %w", err)
	}
	var applied []migrations.Migration
	for _, m := range all {
		if m.Version <= current {
			continue
		}
		// Without arguments pgx sends the file with the simple protocol: several statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO hookd_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			return fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
		applied = append(applied, m)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	for _, m := range applied {
		logger.InfoContext(ctx, "hookd migration applied", "version", m.Version, "name", m.Name)
	}
	if len(applied) == 0 && len(all) > 0 && current > all[len(all)-1].Version {
		logger.WarnContext(ctx, "hookd schema is newer than this build", "schema_version", current)
	}
	return nil
}

// migrateRiver applies River's pending migrations, each in a transaction of its own.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(warnAndAbove{logger.Handler()})})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	for _, v := range res.Versions {
		logger.InfoContext(ctx, "river migration applied", "version", v.Version, "name", v.Name)
	}
	return nil
}

// warnAndAbove passes on the records of Warn and above: rivermigrate says "no migrations to
// apply" at Info at every start, and migrateRiver logs what it applied itself.
type warnAndAbove struct{ slog.Handler }

func (h warnAndAbove) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnAndAbove) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnAndAbove{h.Handler.WithAttrs(attrs)}
}

func (h warnAndAbove) WithGroup(name string) slog.Handler {
	return warnAndAbove{h.Handler.WithGroup(name)}
}
