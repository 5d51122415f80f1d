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

// migrationFiles are hookd's schema changes, named NNNN_what.sql. A released file never changes
// (migrations/released.txt lists them with their checksums); a change to the schema is a new
// file, numbered above every released one.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// uncheckedVersions is the highest version a database may record without a checksum: the runners
// before v0.1.0 recorded none, for migrations 1 to 15.
const uncheckedVersions = 15

// Migrate brings hookd's schema of the database at url up to date, as Open does, and returns the
// names of the migrations it applied, none when the schema was up to date. River's tables are
// not hookd's: NewRiverQueue creates them, and only that. cfg's Schema and Logger apply (nil:
// defaults). A database this build must not use gives an error wrapping
// hookd.ErrIncompatibleSchema, naming the migration and the fix, and is left as it was.
func Migrate(ctx context.Context, url string, cfg *Config) ([]string, error) {
	cfg = cfg.withDefaults()
	pool, err := migrationPool(ctx, url, cfg)
	if err != nil {
		return nil, fmt.Errorf("migrate postgres: %w", err)
	}
	defer pool.Close()
	done, err := migrateLocked(ctx, pool, cfg)
	if err != nil {
		return nil, fmt.Errorf("migrate postgres: %w", err)
	}
	var applied []string
	for _, m := range done {
		applied = append(applied, m.Name)
	}
	return applied, nil
}

// SchemaStatus returns the state of each migration this build knows or the database at url
// records, in version order; a Status with a Problem is one for which Open would refuse the
// database. It only reads, and takes no lock. cfg's Schema applies (nil: defaults).
func SchemaStatus(ctx context.Context, url string, cfg *Config) ([]migrations.Status, error) {
	cfg = cfg.withDefaults()
	pool, err := migrationPool(ctx, url, cfg)
	if err != nil {
		return nil, fmt.Errorf("schema status: %w", err)
	}
	defer pool.Close()
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	recorded, err := readMigrations(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("schema status: %w", err)
	}
	return migrations.Report(known, recorded, uncheckedVersions), nil
}

// migrationPool is a pool of two connections to url, for Migrate and SchemaStatus.
func migrationPool(ctx context.Context, url string, cfg *Config) (*pgxpool.Pool, error) {
	pc, err := poolConfig(url, cfg)
	if err != nil {
		return nil, err
	}
	pc.MaxConns = 2
	return pgxpool.NewWithConfig(ctx, pc)
}

// migrate applies hookd's pending migrations (migrateLocked).
func migrate(ctx context.Context, pool *pgxpool.Pool, cfg *Config) error {
	_, err := migrateLocked(ctx, pool, cfg)
	return err
}

// migrateLocked creates cfg.Schema if it is missing and applies hookd's pending migrations
// (applyMigrations) while it holds the schema's migration lock (withMigrationLock), and returns
// those it applied.
func migrateLocked(ctx context.Context, pool *pgxpool.Pool, cfg *Config) (applied []migrations.Migration, err error) {
	err = withMigrationLock(ctx, pool, cfg.Schema, func(lockConn *pgx.Conn) error {
		applied, err = applyMigrations(ctx, lockConn, cfg)
		return err
	})
	return applied, err
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

// applyMigrations creates cfg.Schema if it is missing, then applies every embedded migration
// that the database does not record, below the highest recorded one too, in version order and in
// one transaction, records each in hookd_migrations with its checksum, and returns those it
// applied. internal/migrations decides what to apply, and refuses, with an error wrapping
// hookd.ErrIncompatibleSchema, a database this build must not use; a refused or failed migration
// leaves the database as it was. Call it under the migration lock.
func applyMigrations(ctx context.Context, conn *pgx.Conn, cfg *Config) ([]migrations.Migration, error) {
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	if cfg.Schema != "" {
		if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{cfg.Schema}.Sanitize()); err != nil {
			return nil, fmt.Errorf("migrate: create schema %s: %w", cfg.Schema, err)
		}
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// A table made before checksums were recorded gains the column; its rows keep an empty
	// checksum, since their text is not known.
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS hookd_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(),
		checksum   text NOT NULL DEFAULT ''
	);
	ALTER TABLE hookd_migrations ADD COLUMN IF NOT EXISTS checksum text NOT NULL DEFAULT ''`); err != nil {
		return nil, fmt.Errorf("migrate: create hookd_migrations: %w", err)
	}
	recorded, err := readMigrations(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	plan, err := migrations.Decide(known, recorded, uncheckedVersions)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	err = plan.Run(func(m migrations.Migration) error {
		// Without arguments pgx sends the file with the simple protocol: several statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO hookd_migrations (version, name, checksum) VALUES ($1, $2, $3)`, m.Version, m.Name, m.Checksum)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("migrate: commit: %w", err)
	}
	for _, m := range plan.Pending {
		cfg.Logger.InfoContext(ctx, "hookd migration applied", "version", m.Version, "name", m.Name)
	}
	return plan.Pending, nil
}

// querier is a pool, a connection or a transaction, as readMigrations needs one.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readMigrations returns the rows of hookd_migrations in the search_path's schema: none when the
// table does not exist, and empty checksums in a table made before checksums were recorded.
func readMigrations(ctx context.Context, q querier) ([]migrations.Record, error) {
	var table, checksum bool
	if err := q.QueryRow(ctx, `SELECT to_regclass('hookd_migrations') IS NOT NULL,
		EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('hookd_migrations') AND attname = 'checksum' AND NOT attisdropped)`,
	).Scan(&table, &checksum); err != nil {
		return nil, fmt.Errorf("look for hookd_migrations: %w", err)
	}
	if !table {
		return nil, nil
	}
	col := "''"
	if checksum {
		col = "checksum"
	}
	rows, err := q.Query(ctx, `SELECT version, name, `+col+`, applied_at FROM hookd_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read hookd_migrations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (migrations.Record, error) {
		var r migrations.Record
		err := row.Scan(&r.Version, &r.Name, &r.Checksum, &r.AppliedAt)
		r.AppliedAt = r.AppliedAt.UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read hookd_migrations: %w", err)
	}
	return out, nil
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
