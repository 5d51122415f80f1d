package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
	"github.com/hookd/hookd/storetest"
)

// open opens the store at path, closed when t ends; its logs are checked for secrets then.
func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, &sqlite.Config{Logger: logcheck.New(t).Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) hookd.Store {
		return open(t, filepath.Join(t.TempDir(), "hookd.db"))
	})
}

func TestReopenKeepsDataAndSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := hookd.Application{ID: "app_1", UID: "acme", Name: "Acme", CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertApplication(ctx, &app) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s = open(t, path)
		got, err := s.GetApplication(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != app.ID {
			t.Fatalf("after reopening: got application %s, want %s", got.ID, app.ID)
		}
		var versions, applied int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM hookd_migrations`).Scan(&applied, &versions); err != nil {
			t.Fatal(err)
		}
		if applied != versions || applied == 0 {
			t.Fatalf("hookd_migrations: %d rows for %d versions", applied, versions)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWALAndPragmas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s := open(t, path)
	ctx := t.Context()
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1", "busy_timeout": "5000",
	} {
		var got string
		if err := s.DB().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no write-ahead log next to the database: %v", err)
	}
}

func TestPathWithURICharacters(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a dir?x=1#frag%41")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hookd db?.sqlite")
	s := open(t, path)
	if err := s.InTx(t.Context(), func(tx hookd.Tx) error {
		return tx.InsertApplication(t.Context(), &hookd.Application{ID: "app_1", Name: "x"})
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the path given: %v", err)
	}
	var mode string
	if err := s.DB().QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q, %v: the query string was taken as part of the path", mode, err)
	}
}

// TestWrapTxFromDB: an app's own transaction on DB() carries its rows and hookd's together.
func TestWrapTxFromDB(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "hookd.db"))
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY, app_id TEXT)`); err != nil {
		t.Fatal(err)
	}
	existing := hookd.Application{ID: "app_existing", UID: "old", Name: "Old"}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertApplication(ctx, &existing) }); err != nil {
		t.Fatal(err)
	}

	sendTx := func(app hookd.Application, commit bool) {
		t.Helper()
		sqlTx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sqlTx.Rollback() }()
		if _, err := sqlTx.ExecContext(ctx, `INSERT INTO orders (id, app_id) VALUES (?, ?)`, "order:"+app.ID, app.ID); err != nil {
			t.Fatal(err)
		}
		tx, err := s.WrapTx(sqlTx)
		if err != nil {
			t.Fatal(err)
		}
		if tx.Raw() != sqlTx {
			t.Fatal("Raw does not return the wrapped *sql.Tx")
		}
		// The wrapped transaction sees what was committed before and what it wrote itself.
		if _, err := tx.GetApplication(ctx, "old"); err != nil {
			t.Fatal(err)
		}
		if err := tx.InsertApplication(ctx, &app); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := sqlTx.QueryRowContext(ctx, `SELECT COUNT(*) FROM hookd_applications WHERE id = ?`, app.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the raw transaction sees %d applications %s (%v), want 1", n, app.ID, err)
		}
		if commit {
			if err := sqlTx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}

	sendTx(hookd.Application{ID: "app_committed", Name: "C"}, true)
	sendTx(hookd.Application{ID: "app_rolled_back", Name: "R"}, false)

	if _, err := s.GetApplication(ctx, "app_committed"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetApplication(ctx, "app_rolled_back"); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("rolled back application: %v, want ErrNotFound", err)
	}
	var orders int
	if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM orders`).Scan(&orders); err != nil || orders != 1 {
		t.Fatalf("%d orders (%v), want 1", orders, err)
	}
}

func TestMissingDirectory(t *testing.T) {
	t.Parallel()
	_, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "no", "such", "dir", "hookd.db"), nil)
	if err == nil {
		t.Fatal("Open of a path in a missing directory succeeded")
	}
}

func TestSecondOpenOfOneFileIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "one.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path, nil); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	again.Close()
}
