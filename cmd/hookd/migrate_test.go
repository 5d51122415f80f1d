package main

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// execSQLite runs statements on the SQLite file at path.
func execSQLite(t *testing.T, path string, stmts ...string) {
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

// statusRow matches the --status line of a migration: version, name, state, and the rest.
func statusRow(version, name, state string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + version + ` +` + name + ` +` + regexp.QuoteMeta(state) + `( |$)`)
}

// TestMigrateSQLite: migrate says what it applied, then that the schema is up to date; --status
// lists each migration; a migration missing below an applied one is applied, or, when it fails,
// the file is refused with the migration named; a file a later release migrated is refused by
// migrate, --status and serve alike.
func TestMigrateSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	db := "sqlite:" + path

	r := run(t, "", "migrate", "--db", db)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "applied 0001_initial\n") ||
		!strings.Contains(r.stdout, "applied 0016_repair_delivery_indexes\n") || !strings.HasSuffix(r.stdout, " applied, schema up to date\n") {
		t.Fatalf("first migrate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--db", db)
	if r.code != exitOK || r.stdout != db+": schema up to date\n" {
		t.Fatalf("second migrate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--status", "--db", db)
	if r.code != exitOK || !statusRow("1", "0001_initial", "applied").MatchString(r.stdout) ||
		!statusRow("16", "0016_repair_delivery_indexes", "applied").MatchString(r.stdout) || !strings.HasSuffix(r.stdout, "\nschema up to date\n") {
		t.Fatalf("--status: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// 16 not recorded: pending, and applied.
	execSQLite(t, path, `DELETE FROM hookd_migrations WHERE version = 16`)
	r = run(t, "", "migrate", "--status", "--db", db)
	if r.code != exitOK || !statusRow("16", "0016_repair_delivery_indexes", "pending").MatchString(r.stdout) || !strings.Contains(r.stdout, "\n1 pending") {
		t.Fatalf("--status without 16: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--db", db)
	if r.code != exitOK || r.stdout != "applied 0016_repair_delivery_indexes\n"+db+": 1 applied, schema up to date\n" {
		t.Fatalf("migrate without 16: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// 6 not recorded, its column there: pending below an applied one, and it fails to apply.
	execSQLite(t, path, `DELETE FROM hookd_migrations WHERE version = 6`)
	r = run(t, "", "migrate", "--status", "--db", db)
	if r.code != exitOK || !statusRow("6", "0006_messages", "pending").MatchString(r.stdout) || !strings.Contains(r.stdout, "missing below an applied one") {
		t.Fatalf("--status without 6: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--db", db)
	if r.code != exitFailure || r.stdout != "" {
		t.Fatalf("migrate without 6: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{"migration 6 (0006_messages)", "failed to apply", "duplicate column name: tags", "nothing was applied", `hint: the error names the migration and the fix; "hookd migrate --status" lists every migration`} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("migrate without 6: stderr %q lacks %q", r.stderr, w)
		}
	}

	// A later release's migration: refused.
	execSQLite(t, path, `INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (99, '0099_later', 'ab', 0)`)
	r = run(t, "", "migrate", "--status", "--db", db)
	if r.code != exitFailure || !statusRow("99", "0099_later", "unknown, refused").MatchString(r.stdout) ||
		!strings.Contains(r.stderr, "hookd refuses this database: migration 99 (0099_later)") || !strings.Contains(r.stderr, "run that release or later") {
		t.Fatalf("--status with 99: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"migrate", "--db", db}, {"serve", "--listen", "127.0.0.1:0", "--db", db, "--workers", "1"}} {
		r = run(t, "", args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "migration 99 (0099_later)") || !strings.Contains(r.stderr, "run that release or later") ||
			!strings.Contains(r.stderr, `"hookd migrate --status" lists every migration`) {
			t.Errorf("%s with 99: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
	}
}

// TestMigrateStatusMissingFile: --status of a file that does not exist says so, and makes none.
func TestMigrateStatusMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "typo.db")
	r := run(t, "", "migrate", "--status", "--db", "sqlite:"+path)
	if r.code != exitFailure || !strings.Contains(r.stderr, "no such file") || !strings.Contains(r.stderr, "hint: check --db") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("--status made the file: %v", err)
	}
}

// TestMigratePostgres: migrate and --status on PostgreSQL.
func TestMigratePostgres(t *testing.T) {
	t.Parallel()
	u := freshDatabase(t)
	r := run(t, "", "migrate", "--db", u)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "applied 0001_initial\n") || !strings.Contains(r.stdout, "applied 0016_repair_endpoint_slots\n") {
		t.Fatalf("first migrate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--db", u)
	if r.code != exitOK || !strings.HasSuffix(r.stdout, ": schema up to date\n") {
		t.Fatalf("second migrate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "migrate", "--status", "--db", u)
	if r.code != exitOK || !statusRow("12", "0012_endpoint_slots", "applied").MatchString(r.stdout) || !strings.HasSuffix(r.stdout, "\nschema up to date\n") {
		t.Fatalf("--status: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
