package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hookd/hookd/internal/migrations"
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

// Migrate brings the schema of the SQLite database at path (created if missing) up to date, as
// Open does, and returns the names of the migrations it applied, none when the schema was up to
// date. It takes the file's process lock as Open does (ErrLocked while another process has the
// file open), and leaves the rest of what Open does at start (moving River's jobs) to Open. A
// database this build must not use gives an error wrapping hookd.ErrIncompatibleSchema, naming
// the migration and the fix, and is left as it was.
func Migrate(ctx context.Context, path string, cfg *Config) (applied []string, err error) {
	cfg = cfg.withDefaults()
	lock, err := lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, readOnly(path, err))
	}
	defer func() { err = errors.Join(err, lock.release()) }()
	if err := checkWritable(path); err != nil {
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	db.SetMaxOpenConns(1)
	done, err := applyMigrations(ctx, db, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("migrate sqlite %s: %w", path, openFault(path, err))
	}
	for _, m := range done {
		applied = append(applied, m.Name)
	}
	return applied, nil
}

// SchemaStatus returns the state of each migration this build knows or the SQLite database at
// path records, in version order; a Status with a Problem is one for which Open would refuse the
// file. It only reads: it neither creates the file nor takes its lock, so it runs beside the
// process that has the file open. A missing file is an error wrapping fs.ErrNotExist.
func SchemaStatus(ctx context.Context, path string) ([]migrations.Status, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("schema status of %s: %w", path, err)
	}
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return nil, fmt.Errorf("schema status of %s: %w", path, err)
	}
	defer db.Close()
	recorded, err := readMigrations(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("schema status of %s: %w", path, err)
	}
	return migrations.Report(known, recorded, uncheckedVersions), nil
}

// migrate applies hookd's pending migrations (applyMigrations).
func migrate(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	_, err := applyMigrations(ctx, db, logger)
	return err
}

// applyMigrations applies every embedded migration that db does not record, below the highest
// recorded one too, in version order and in one transaction, records each in hookd_migrations
// with its checksum, and returns those it applied. internal/migrations decides what to apply,
// and refuses, with an error wrapping hookd.ErrIncompatibleSchema, a database this build must
// not use; a refused or failed migration leaves the database as it was. The transaction takes
// the write lock first (_txlock=immediate), so two connections migrating one file at once apply
// the migrations once.
func applyMigrations(ctx context.Context, db *sql.DB, logger *slog.Logger) ([]migrations.Migration, error) {
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("migrate: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := createMigrationsTable(ctx, tx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
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
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`,
			m.Version, m.Name, m.Checksum, time.Now().UnixMicro())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("migrate: commit: %w", err)
	}
	for _, m := range plan.Pending {
		logger.InfoContext(ctx, "hookd migration applied", "version", m.Version, "name", m.Name)
	}
	return plan.Pending, nil
}

// createMigrationsTable creates hookd_migrations, or adds the checksum column to one made before
// checksums were recorded (its rows keep an empty checksum: their text is not known).
func createMigrationsTable(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS hookd_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL,
		checksum   TEXT NOT NULL DEFAULT ''
	)`); err != nil {
		return fmt.Errorf("create hookd_migrations: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('hookd_migrations') WHERE name = 'checksum'`).Scan(&n); err != nil {
		return fmt.Errorf("read hookd_migrations' columns: %w", err)
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE hookd_migrations ADD COLUMN checksum TEXT NOT NULL DEFAULT ''`); err != nil {
			return fmt.Errorf("add hookd_migrations.checksum: %w", err)
		}
	}
	return nil
}

// readMigrations returns the rows of hookd_migrations: none when the table does not exist, and
// empty checksums in a table made before checksums were recorded.
func readMigrations(ctx context.Context, q querier) ([]migrations.Record, error) {
	var table, checksum int
	if err := q.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'checksum')
		FROM pragma_table_info('hookd_migrations')`).Scan(&table, &checksum); err != nil {
		return nil, fmt.Errorf("read hookd_migrations' columns: %w", err)
	}
	if table == 0 {
		return nil, nil
	}
	col := "''"
	if checksum > 0 {
		col = "checksum"
	}
	rows, err := q.QueryContext(ctx, `SELECT version, name, `+col+`, applied_at FROM hookd_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read hookd_migrations: %w", err)
	}
	defer rows.Close()
	var out []migrations.Record
	for rows.Next() {
		var r migrations.Record
		var at int64
		if err := rows.Scan(&r.Version, &r.Name, &r.Checksum, &at); err != nil {
			return nil, fmt.Errorf("read hookd_migrations: %w", err)
		}
		r.AppliedAt = time.UnixMicro(at).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read hookd_migrations: %w", err)
	}
	return out, nil
}
