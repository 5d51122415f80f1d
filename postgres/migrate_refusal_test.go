package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/migrations"
	"github.com/hookd/hookd/postgres"
)

// execSchema runs statements in schema, outside any store.
func execSchema(t *testing.T, u, schema string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), inSchema(t, u, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range stmts {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// recordedRows dumps hookd_migrations of schema, whatever its columns.
func recordedRows(t *testing.T, u, schema string) []string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), inSchema(t, u, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT * FROM hookd_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for _, f := range rows.FieldDescriptions() {
		out = append(out, f.Name)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(fmt.Sprintln(vals...)))
	}
	return out
}

// migratedSchema is a new schema that Open migrated, closed.
func migratedSchema(t *testing.T, u string) string {
	t.Helper()
	schema := freshSchema(t, u)
	s, err := postgres.Open(t.Context(), u, &postgres.Config{Schema: schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return schema
}

// TestOpenRefusesIncompatibleSchema: a schema this build must not use is refused, with an error
// wrapping hookd.ErrIncompatibleSchema that names the migration and the fix, and left as it was.
func TestOpenRefusesIncompatibleSchema(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	for _, tc := range []struct {
		name   string
		schema func(t *testing.T) string
		words  []string
	}{
		{"a version of a later release", func(t *testing.T) string {
			schema := migratedSchema(t, u)
			execSchema(t, u, schema, `INSERT INTO hookd_migrations (version, name, checksum) VALUES (99, '0099_later', 'ab')`)
			return schema
		}, []string{"migration 99 (0099_later)", "does not know", "run that release or later, or restore the backup taken before the upgrade"}},
		{"another text of a migration", func(t *testing.T) string {
			schema := migratedSchema(t, u)
			execSchema(t, u, schema, `UPDATE hookd_migrations SET checksum = '`+migrations.Checksum([]byte("edited"))+`' WHERE version = 12`)
			return schema
		}, []string{"migration 12 (0012_endpoint_slots)", "another text", "restore the backup"}},
		{"another name of a migration", func(t *testing.T) string {
			schema := migratedSchema(t, u)
			execSchema(t, u, schema, `UPDATE hookd_migrations SET name = '0003_renamed' WHERE version = 3`)
			return schema
		}, []string{"migration 3 (0003_events)", "as 0003_renamed"}},
		{"no checksum on a migration of a release", func(t *testing.T) string {
			schema := migratedSchema(t, u)
			execSchema(t, u, schema, `UPDATE hookd_migrations SET checksum = '' WHERE version = 16`)
			return schema
		}, []string{"migration 16 (0016_repair_endpoint_slots)", "without a checksum"}},
		{"a missing migration that fails", func(t *testing.T) string {
			// Made at db8f5f0, without 4 (message tags), and a column of 4 added by hand.
			schema := legacySchema(t, u, todays(1, 2, 3, 5))
			execSchema(t, u, schema, `ALTER TABLE hookd_messages ADD COLUMN tags jsonb`)
			return schema
		}, []string{"migration 4 (0004_messages)", "missing below recorded migration 5 and failed to apply", `column "tags" of relation "hookd_messages" already exists`, "nothing was applied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema := tc.schema(t)
			before, rows := schemaOf(t, u, schema), recordedRows(t, u, schema)
			s, err := postgres.Open(t.Context(), u, &postgres.Config{Schema: schema, Logger: testLogger(t)})
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
			if got := schemaOf(t, u, schema); !slices.Equal(got, before) {
				t.Errorf("Open changed the schema:\n%s", diffLines(got, before))
			}
			if got := recordedRows(t, u, schema); !slices.Equal(got, rows) {
				t.Errorf("Open changed hookd_migrations:\n%s", diffLines(got, rows))
			}
			if _, err := postgres.Migrate(t.Context(), u, &postgres.Config{Schema: schema}); !errors.Is(err, hookd.ErrIncompatibleSchema) {
				t.Errorf("Migrate: %v, want ErrIncompatibleSchema", err)
			}
		})
	}
}

// TestMigrateAndSchemaStatus: SchemaStatus reads each migration's state without changing the
// schema; Migrate applies what is pending and says what; PendingMigrations says what Open would
// apply, and refuses what Open would refuse.
func TestMigrateAndSchemaStatus(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u := testURL(t)
	known := knownMigrations(t)

	empty := freshSchema(t, u)
	status, err := postgres.SchemaStatus(ctx, u, &postgres.Config{Schema: empty})
	if err != nil || len(status) != len(known) || status[0].State != migrations.Pending {
		t.Fatalf("SchemaStatus of a schema without hookd: %+v, %v; want all pending", status, err)
	}

	schema := legacySchema(t, u, todays(1, 2, 3, 5))
	cfg := &postgres.Config{Schema: schema, Logger: testLogger(t)}
	status, err = postgres.SchemaStatus(ctx, u, cfg)
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
			if s.Missing != (s.Version == 4) {
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
	want := []string{known[4].Name}
	for _, v := range slices.Sorted(maps.Keys(known)) { // versions may skip numbers
		if v >= 6 {
			want = append(want, known[v].Name)
		}
	}
	if !slices.Equal(pending, want) {
		t.Fatalf("pending %v, want %v", pending, want)
	}
	if got := recordedRows(t, u, schema); len(got) != 3+4 {
		t.Fatalf("SchemaStatus changed hookd_migrations: %v", got)
	}

	applied, err := postgres.Migrate(ctx, u, cfg)
	if err != nil || !slices.Equal(applied, want) {
		t.Fatalf("Migrate = %v, %v; want %v", applied, err, want)
	}
	if applied, err := postgres.Migrate(ctx, u, cfg); err != nil || applied != nil {
		t.Fatalf("second Migrate = %v, %v; want nothing applied", applied, err)
	}

	s, err := postgres.Open(ctx, u, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if pending, err := postgres.PendingMigrations(ctx, s); err != nil || len(pending) != 0 {
		t.Fatalf("PendingMigrations when current: %v, %v; want none pending", pending, err)
	}
	if _, err := s.Pool().Exec(ctx, `DELETE FROM hookd_migrations WHERE version = 16`); err != nil {
		t.Fatal(err)
	}
	if pending, err := postgres.PendingMigrations(ctx, s); err != nil || len(pending) != 1 || pending[0].Version != 16 {
		t.Fatalf("PendingMigrations without 16: %v, %v; want 16 pending", pending, err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO hookd_migrations (version, name, checksum) VALUES (99, '0099_later', 'ab')`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.PendingMigrations(ctx, s); !errors.Is(err, hookd.ErrIncompatibleSchema) {
		t.Fatalf("PendingMigrations with a later release's migration: %v, want ErrIncompatibleSchema", err)
	}
	status, err = postgres.SchemaStatus(ctx, u, cfg)
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
