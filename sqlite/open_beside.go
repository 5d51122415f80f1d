package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/hookd/hookd/internal/migrations"
)

// ErrBeside: the store was opened beside the process that holds the file (Config.Beside), and
// what was asked is that process's alone: running the file's queue.
var ErrBeside = errors.New("the store is open beside the process that holds the file, which runs its queue")

// ErrSchemaDiffers: Open was to open a file beside the process that holds it (Config.Beside), and
// the migrations the file records are not this build's. A *SchemaError says which.
var ErrSchemaDiffers = errors.New("the file's schema is not this build's")

// SchemaError says how the migrations a file records differ from this build's, when Open was to
// open the file beside the process that holds it. It wraps ErrSchemaDiffers.
type SchemaError struct {
	// Pending are the versions of this build's migrations that the file lacks: this build would
	// migrate the file, which only the process holding it may do (serve applies them at start).
	Pending []int
	// Unknown are versions the file records that this build lacks: a later build made the file.
	Unknown []int
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v:", ErrSchemaDiffers)
	if len(e.Pending) > 0 {
		fmt.Fprintf(&b, " this build's %s not applied to it;", migrationList(e.Pending, "is", "are"))
	}
	if len(e.Unknown) > 0 {
		fmt.Fprintf(&b, " it records %s that this build does not know (a later release made the file);", migrationList(e.Unknown, "", ""))
	}
	b.WriteString(" stop the process that holds the file, or run the same release as that process")
	return b.String()
}

func (e *SchemaError) Unwrap() error { return ErrSchemaDiffers }

// migrationList names versions: "migration 15 is", "migrations 15, 16 are" (verb by number).
func migrationList(vs []int, one, many string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	if len(vs) == 1 {
		return strings.TrimSpace("migration " + s[0] + " " + one)
	}
	return strings.TrimSpace("migrations " + strings.Join(s, ", ") + " " + many)
}

// OpenedBeside reports whether the store was opened beside the process that holds the file
// (Config.Beside): it has not migrated the file and runs no queue.
func (s *Store) OpenedBeside() bool { return s.beside }

// besideDSN is dsn for a store opened beside another process: mode=rw, so that a file that is
// not there is an error rather than a new, empty database.
func besideDSN(path string) string { return dsn(path) + "&mode=rw" }

// checkSchemaBeside returns a *SchemaError unless the migrations db records are exactly this
// build's, and the error the migration runner would refuse the file with (wrapping
// hookd.ErrIncompatibleSchema) when a recorded migration's name or text is not this build's. A
// file may be opened beside its holder when the holder runs the same release, and then both know
// the same set.
func checkSchemaBeside(ctx context.Context, db *sql.DB) error {
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	recorded, err := readMigrations(ctx, db)
	if err != nil {
		return fmt.Errorf("read the schema's version: %w", err)
	}
	e := &SchemaError{}
	for _, st := range migrations.Report(known, recorded, uncheckedVersions) {
		switch {
		case st.State == migrations.Pending:
			e.Pending = append(e.Pending, st.Version)
		case st.State == migrations.Unknown:
			e.Unknown = append(e.Unknown, st.Version)
		case st.Problem != nil:
			return st.Problem
		}
	}
	if len(e.Pending) == 0 && len(e.Unknown) == 0 {
		return nil
	}
	return e
}
