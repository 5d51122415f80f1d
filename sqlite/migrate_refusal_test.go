package sqlite_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/migrations"
	"github.com/hookd/hookd/sqlite"
)

// execFile runs statements on the file at path, outside any store.
func execFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// recordedRows dumps hookd_migrations of the file at path, whatever its columns.
func recordedRows(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM hookd_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := []string{strings.Join(cols, " ")}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var line []string
		for _, v := range vals {
			line = append(line, v.String)
		}
		out = append(out, strings.Join(line, " "))
	}
	return out
}

// migratedFile is a new file that Open migrated.
func migratedFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookd.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenRefusesIncompatibleSchema: a file this build must not use is refused, with an error
// wrapping hookd.ErrIncompatibleSchema that names the migration and the fix, and left as it was.
func TestOpenRefusesIncompatibleSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		file  func(t *testing.T) string
		words []string
	}{
		{"a version of a later release", func(t *testing.T) string {
			path := migratedFile(t)
			execFile(t, path, `INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (99, '0099_later', 'ab', 0)`)
			return path
		}, []string{"migration 99 (0099_later)", "does not know", "run that release or later, or restore the backup taken before the upgrade"}},
		{"another text of a migration", func(t *testing.T) string {
			path := migratedFile(t)
			execFile(t, path, `UPDATE hookd_migrations SET checksum = '`+migrations.Checksum([]byte("edited"))+`' WHERE version = 3`)
			return path
		}, []string{"migration 3 (0003_jobs)", "another text", "restore the backup"}},
		{"another name of a migration", func(t *testing.T) string {
			path := migratedFile(t)
			execFile(t, path, `UPDATE hookd_migrations SET name = '0005_renamed' WHERE version = 5`)
			return path
		}, []string{"migration 5 (0005_events)", "as 0005_renamed"}},
		{"no checksum on a migration of a release", func(t *testing.T) string {
			path := migratedFile(t)
			execFile(t, path, `UPDATE hookd_migrations SET checksum = '' WHERE version = 16`)
			return path
		}, []string{"migration 16 (0016_repair_delivery_indexes)", "without a checksum"}},
		{"a missing migration that fails", func(t *testing.T) string {
			// Made at db8f5f0, without 6 (message tags), and a column of 6 added by hand.
			path := legacyFile(t, todays(1, 2, 3, 4, 5, 7))
			execFile(t, path, `ALTER TABLE hookd_messages ADD COLUMN tags TEXT`)
			return path
		}, []string{"migration 6 (0006_messages)", "missing below recorded migration 7 and failed to apply", "duplicate column name: tags", "nothing was applied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tc.file(t)
			schema, rows := schemaOf(t, path), recordedRows(t, path)
			s, err := sqlite.Open(t.Context(), path, nil)
			if err == nil {
				_ = s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, hookd.ErrIncompatibleSchema) {
				t.Fatalf("Open: %v, want ErrIncompatibleSchema", err)
			}
			t.Logf("Open: %v", err)
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := schemaOf(t, path); !slices.Equal(got, schema) {
				t.Errorf("Open changed the schema:\n%s", diffLines(got, schema))
			}
			if got := recordedRows(t, path); !slices.Equal(got, rows) {
				t.Errorf("Open changed hookd_migrations:\n%s", diffLines(got, rows))
			}
			if _, err := sqlite.Migrate(t.Context(), path, nil); !errors.Is(err, hookd.ErrIncompatibleSchema) {
				t.Errorf("Migrate: %v, want ErrIncompatibleSchema", err)
			}
		})
	}
}

// TestMigrateAndSchemaStatus: SchemaStatus reads each migration's state without changing the
// file, beside a store that has it open too; Migrate applies what is pending and says what.
func TestMigrateAndSchemaStatus(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := sqlite.SchemaStatus(ctx, missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SchemaStatus of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SchemaStatus made the file: %v", err)
	}

	path := legacyFile(t, todays(1, 2, 3, 4, 5, 7))
	known := knownMigrations(t)
	status, err := sqlite.SchemaStatus(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	for _, s := range status {
		if s.Problem != nil {
			t.Errorf("%s: %v", s.Name, s.Problem)
		}
		switch s.State {
		case migrations.Pending:
			pending = append(pending, s.Name)
			if s.Missing != (s.Version == 6) {
				t.Errorf("%s: Missing = %v", s.Name, s.Missing)
			}
		case migrations.Applied:
			if !s.Unchecked || s.AppliedAt.IsZero() || time.Since(s.AppliedAt) > time.Hour {
				t.Errorf("%s: %+v, want applied before checksums, a moment ago", s.Name, s)
			}
		default:
			t.Errorf("%s: %s", s.Name, s.State)
		}
	}
	want := []string{known[6].Name}
	for v := 8; v <= len(known); v++ {
		want = append(want, known[v].Name)
	}
	if !slices.Equal(pending, want) {
		t.Fatalf("pending %v, want %v", pending, want)
	}
	if got := recordedRows(t, path); len(got) != 7 || got[0] != "version name applied_at" {
		t.Fatalf("SchemaStatus changed hookd_migrations: %v", got)
	}

	applied, err := sqlite.Migrate(ctx, path, nil)
	if err != nil || !slices.Equal(applied, want) {
		t.Fatalf("Migrate = %v, %v; want %v", applied, err, want)
	}
	if applied, err := sqlite.Migrate(ctx, path, nil); err != nil || applied != nil {
		t.Fatalf("second Migrate = %v, %v; want nothing applied", applied, err)
	}

	// Beside a store that has the file open.
	s := open(t, path)
	status, err = sqlite.SchemaStatus(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range status {
		if st.State != migrations.Applied || st.Problem != nil || st.Unchecked != (st.Version <= 7 && st.Version != 6) {
			t.Errorf("%s: %+v", st.Name, st)
		}
	}
	if len(status) != len(known) {
		t.Errorf("%d statuses, want %d", len(status), len(known))
	}
	if _, err := sqlite.Migrate(ctx, path, nil); !errors.Is(err, sqlite.ErrLocked) {
		t.Errorf("Migrate beside an open store: %v, want ErrLocked", err)
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (99, '0099_later', 'ab', 0)`); err != nil {
		t.Fatal(err)
	}
	status, err = sqlite.SchemaStatus(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	last := status[len(status)-1]
	if last.Version != 99 || last.State != migrations.Unknown || !errors.Is(last.Problem, hookd.ErrIncompatibleSchema) {
		t.Errorf("last status %+v, want 99 unknown and refused", last)
	}
}

// TestReleasedMigrations: a released migration never changes, and a new one is numbered above
// every released one (migrations/released.txt).
func TestReleasedMigrations(t *testing.T) {
	t.Parallel()
	if err := migrations.CheckReleasedFS(os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
}
