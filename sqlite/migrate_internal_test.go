package sqlite

import (
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/internal/migrations"
)

// openDB opens the file at path as the store's write connection does, with no store around it.
func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestMigrateAtOnceAppliesOnce: connections migrating one new file at once apply each migration
// once, in one of them, and none fails.
func TestMigrateAtOnceAppliesOnce(t *testing.T) {
	t.Parallel()
	known, err := migrations.Load(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hookd.db")
	logger := logcheck.New(t).Logger()
	const n = 4
	dbs := make([]*sql.DB, n)
	for i := range dbs {
		dbs[i] = openDB(t, path)
	}
	// The file exists, in WAL mode, before they start: a connection that begins while another
	// switches a new file to WAL gets SQLITE_BUSY at once, past busy_timeout (the process lock
	// keeps two processes from creating one file at once).
	if err := dbs[0].PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	applied := make([][]migrations.Migration, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			applied[i], errs[i] = applyMigrations(t.Context(), dbs[i], logger)
		})
	}
	close(start)
	wg.Wait()
	migrated := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("migration %d: %v", i, errs[i])
		}
		if len(applied[i]) > 0 {
			migrated++
			if len(applied[i]) != len(known) {
				t.Errorf("connection %d applied %d migrations, want all %d", i, len(applied[i]), len(known))
			}
		}
	}
	if migrated != 1 {
		t.Fatalf("%d connections applied migrations, want 1", migrated)
	}
	var rows, versions int
	if err := dbs[0].QueryRowContext(t.Context(), `SELECT count(*), count(DISTINCT version) FROM hookd_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows != len(known) || versions != len(known) {
		t.Fatalf("hookd_migrations: %d rows of %d versions, want %d", rows, versions, len(known))
	}
}
