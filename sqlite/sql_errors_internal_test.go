package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hookd/hookd"
)

// fileFault takes the codes of a file that cannot be written or read now, primary or extended,
// and no others.
func TestFileFault(t *testing.T) {
	for _, tc := range []struct {
		code int
		want bool
	}{
		{sqlite3.SQLITE_FULL, true},
		{sqlite3.SQLITE_IOERR, true},
		{sqlite3.SQLITE_IOERR_WRITE, true},   // EFBIG, EPERM, EROFS on write
		{sqlite3.SQLITE_IOERR_FSYNC, true},   // EIO on fsync
		{sqlite3.SQLITE_IOERR_SHMSIZE, true}, // -shm cannot grow: disk full
		{sqlite3.SQLITE_READONLY, true},      // the file opened read-only
		{sqlite3.SQLITE_READONLY_DIRECTORY, true},
		{sqlite3.SQLITE_CANTOPEN, true},
		{sqlite3.SQLITE_CANTOPEN_ISDIR, true},
		{sqlite3.SQLITE_CONSTRAINT_UNIQUE, false},
		{sqlite3.SQLITE_BUSY, false},
		{sqlite3.SQLITE_CORRUPT, false}, // not transient: a 500, logged
		{sqlite3.SQLITE_ERROR, false},
		{sqlite3.SQLITE_MISUSE, false},
	} {
		if got := fileFault(tc.code); got != tc.want {
			t.Errorf("fileFault(%d) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

// classify marks the driver's real errors of a full database, a read-only one and a file that
// cannot be opened as hookd.ErrUnavailable, and leaves a taken key and a bad statement alone.
func TestClassifyFileFaults(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.db")
	db := openRaw(t, "file:"+path)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES ('a', NULL)`); err != nil {
		t.Fatal(err)
	}
	// SQLITE_FULL, as a full disk gives it: no page may be added.
	if _, err := db.ExecContext(ctx, `PRAGMA max_page_count = 1`); err != nil {
		t.Fatal(err)
	}
	_, full := db.ExecContext(ctx, `INSERT INTO t VALUES ('b', zeroblob(100000))`)
	_, taken := db.ExecContext(ctx, `INSERT INTO t VALUES ('a', NULL)`)
	_, bad := db.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`)
	_, readOnly := openRaw(t, "file:"+path+"?mode=ro").ExecContext(ctx, `INSERT INTO t VALUES ('c', NULL)`)
	cantOpen := openRaw(t, "file:"+filepath.Join(dir, "missing", "x.db")).PingContext(ctx)

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"full", full, hookd.ErrUnavailable},
		{"read-only", readOnly, hookd.ErrUnavailable},
		{"cannot open", cantOpen, hookd.ErrUnavailable},
		{"key taken", taken, hookd.ErrConflict},
		{"no such table", bad, nil},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		got := classify(tc.err)
		if unavail := errors.Is(got, hookd.ErrUnavailable); unavail != (tc.want == hookd.ErrUnavailable) {
			t.Errorf("%s: classify(%v) unavailable = %v", tc.name, tc.err, unavail)
		}
		if tc.want != nil && !errors.Is(got, tc.want) {
			t.Errorf("%s: classify(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("%s: classify lost the driver's error: %v", tc.name, got)
		}
	}
	// Marking twice wraps once.
	once := unavailable(full)
	if twice := unavailable(once); twice != once {
		t.Errorf("unavailable wrapped a marked error again: %v", twice)
	}
}

func openRaw(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: max_page_count is a connection's setting
	t.Cleanup(func() { db.Close() })
	return db
}
