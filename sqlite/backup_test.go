package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestBackupWhileWritten copies a file that its store holds while a writer commits one
// application after another: the copy holds every application committed before Backup began, and
// is a moment of the file, applications 1 to n with none missing between. It opens as a store.
func TestBackupWhileWritten(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	s := open(t, path)
	insert := func(i int64) error {
		return s.InTx(ctx, func(tx hookd.Tx) error {
			id := fmt.Sprintf("app_%06d", i)
			return tx.InsertApplication(ctx, &hookd.Application{ID: id, UID: id, Name: id})
		})
	}
	var committed atomic.Int64
	for range 200 {
		if err := insert(committed.Add(1)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	writerDone := make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				writerDone <- nil
				return
			default:
			}
			i := committed.Load() + 1
			if err := insert(i); err != nil {
				writerDone <- err
				return
			}
			committed.Store(i)
		}
	}()
	before := committed.Load()
	out := filepath.Join(dir, "copy.db")
	res, err := sqlite.Backup(ctx, path, out, nil)
	close(stop)
	if werr := <-writerDone; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := committed.Load()

	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Size != fi.Size() || res.Size == 0 {
		t.Errorf("BackupResult.Size %d, the file has %d bytes", res.Size, fi.Size())
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the copy's mode is %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".copy.db.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	c := open(t, out)
	var n int64
	var first, last string
	if err := c.DB().QueryRowContext(ctx, `SELECT count(*), min(id), max(id) FROM hookd_applications`).Scan(&n, &first, &last); err != nil {
		t.Fatal(err)
	}
	if n < before || n > after || first != "app_000001" || last != fmt.Sprintf("app_%06d", n) {
		t.Errorf("the copy holds %d applications, %s to %s; want 1 to n with %d <= n <= %d", n, first, last, before, after)
	}
	t.Logf("%d applications committed before Backup, %d after; the copy holds %d", before, after, n)
}

// TestBackupWritesNothingToTheDatabase: backing up a file that no process holds leaves it byte
// for byte as it was.
func TestBackupWritesNothingToTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, func(tx hookd.Tx) error {
		return tx.InsertApplication(ctx, &hookd.Application{ID: "app_1", UID: "a", Name: "a"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	was, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Backup(ctx, path, filepath.Join(dir, "copy.db"), nil); err != nil {
		t.Fatal(err)
	}
	is, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(was, is) {
		t.Error("the database changed during Backup")
	}
	if _, err := sqlite.Backup(ctx, path, filepath.Join(dir, "full.db"), &sqlite.BackupConfig{FullCheck: true}); err != nil {
		t.Errorf("Backup with FullCheck: %v", err)
	}
}

// TestBackupRefuses: an existing target without Overwrite (left as it was), the database's own
// files, a directory, and a database that is not there are refused; Overwrite replaces a file.
func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	holder := open(t, path)

	existing := filepath.Join(dir, "old.db")
	if err := os.WriteFile(existing, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Backup(ctx, path, existing, nil); !errors.Is(err, fs.ErrExist) {
		t.Errorf("an existing target: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "an older backup" {
		t.Errorf("the refused target changed: %q", b)
	}
	if _, err := sqlite.Backup(ctx, path, existing, &sqlite.BackupConfig{Overwrite: true}); err != nil {
		t.Errorf("Overwrite: %v", err)
	}
	if b, _ := os.ReadFile(existing); !bytes.HasPrefix(b, []byte("SQLite format 3\x00")) {
		t.Errorf("Overwrite left %q", b[:min(len(b), 20)])
	}

	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{path, path + "-wal", path + "-shm", path + ".lock", link, dir} {
		if _, err := sqlite.Backup(ctx, path, target, &sqlite.BackupConfig{Overwrite: true}); err == nil {
			t.Errorf("Backup to %s succeeded", target)
		}
	}
	if err := holder.Ping(ctx); err != nil {
		t.Errorf("the database after the refusals: %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link after the refusal: %v, %v", fi, err)
	}

	missing := filepath.Join(dir, "typo.db")
	if _, err := sqlite.Backup(ctx, missing, filepath.Join(dir, "x.db"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a database that is not there: %v, want fs.ErrNotExist", err)
	}
	for _, p := range []string{missing, filepath.Join(dir, "x.db")} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after the refusal", p)
		}
	}
}

// TestBackupCancelled: a cancelled context stops Backup and leaves no file behind.
func TestBackupCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	open(t, path)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := filepath.Join(dir, "copy.db")
	if _, err := sqlite.Backup(ctx, path, out, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Backup with a cancelled context: %v, want context.Canceled", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*copy.db*")); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestWALShrinksAfterLongRead: while a read transaction (a backup's) holds its snapshot, the WAL
// grows past 64 MiB with the writes beside it; once the read ends, the writes that follow bring
// the -wal file back to 64 MiB at most (journal_size_limit).
func TestWALShrinksAfterLongRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s := open(t, path)
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE app_blobs (id INTEGER PRIMARY KEY, body BLOB)`); err != nil {
		t.Fatal(err)
	}
	reader, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	rtx, err := reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRowContext(ctx, `SELECT count(*) FROM hookd_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	write := func(rows int) {
		t.Helper()
		for range rows {
			if _, err := s.DB().ExecContext(ctx, `INSERT OR REPLACE INTO app_blobs (id, body) VALUES (abs(random()) % 64, randomblob(1048576))`); err != nil {
				t.Fatal(err)
			}
		}
	}
	walSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	const limit = 64 << 20
	write(100)
	grown := walSize()
	if grown <= limit {
		t.Fatalf("the WAL is %d bytes with a read open, want it past %d: the test does not hold the WAL", grown, limit)
	}
	if err := rtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	write(40)
	if got := walSize(); got > limit {
		t.Errorf("the WAL is %d bytes after the read ended and more writes (%d while it was open), want at most %d", got, grown, limit)
	}
}
