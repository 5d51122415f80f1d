package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrCorruptCopy: the copy Backup made fails SQLite's check, so Backup removed it. The database
// itself is likely damaged: check it with PRAGMA integrity_check.
var ErrCorruptCopy = errors.New("the copy fails SQLite's integrity check")

// BackupConfig configures Backup. A nil *BackupConfig means every default.
type BackupConfig struct {
	// Overwrite lets Backup replace a file already at the target. Default: false, and a file
	// there gives an error wrapping fs.ErrExist.
	Overwrite bool
	// FullCheck checks the copy with PRAGMA integrity_check, which also compares every index
	// with its table (about 3.5 times as long), rather than PRAGMA quick_check. Default: false.
	FullCheck bool
}

// BackupResult is what Backup made.
type BackupResult struct {
	Size  int64         // bytes in the copy
	Copy  time.Duration // taking the copy (VACUUM INTO) and syncing it to disk
	Check time.Duration // checking the copy
}

// Backup writes a consistent copy of the SQLite database at path to out, whether or not a
// process (a running hookd serve) has the file open. The copy is what the database held at one
// moment, every transaction committed by then and none after, made by VACUUM INTO on a read-only
// connection of its own: Backup takes no process lock, writes nothing to the database, and holds
// one read transaction while it copies, which writers in WAL mode do not wait for (the WAL grows
// meanwhile, and is checkpointed after). The copy is one self-contained file (no -wal beside it),
// compacted, with mode 0600.
//
// It is written beside out under a temporary name, checked (PRAGMA quick_check, or
// integrity_check with cfg.FullCheck; a failure gives ErrCorruptCopy), synced to disk, and only
// then given the name out, so that out is never a partial copy. A file at out gives an error
// wrapping fs.ErrExist unless cfg.Overwrite; out may never name the database or a file of its
// (-wal, -shm, .lock).
func Backup(ctx context.Context, path, out string, cfg *BackupConfig) (BackupResult, error) {
	if cfg == nil {
		cfg = &BackupConfig{}
	}
	var res BackupResult
	fail := func(err error) (BackupResult, error) {
		return BackupResult{}, fmt.Errorf("back up %s to %s: %w", path, out, err)
	}
	if _, err := os.Stat(path); err != nil {
		return fail(err)
	}
	if err := checkBackupTarget(path, out, cfg.Overwrite); err != nil {
		return fail(err)
	}
	start := time.Now()
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return fail(err)
	}
	tmpName := tmp.Name()
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	placed := false
	defer func() {
		if !placed {
			_ = os.Remove(tmpName)
		}
	}()
	if err := vacuumInto(ctx, path, tmpName); err != nil {
		return fail(err)
	}
	if err := syncFile(tmpName); err != nil {
		return fail(err)
	}
	res.Copy = time.Since(start)
	start = time.Now()
	if err := checkCopy(ctx, tmpName, cfg.FullCheck); err != nil {
		return fail(err)
	}
	res.Check = time.Since(start)
	fi, err := os.Stat(tmpName)
	if err != nil {
		return fail(err)
	}
	res.Size = fi.Size()
	if err := place(tmpName, out, cfg.Overwrite); err != nil {
		return fail(err)
	}
	placed = true
	if err := syncFile(filepath.Dir(out)); err != nil {
		return fail(err)
	}
	return res, nil
}

// checkBackupTarget refuses an out that is a directory, the database at path or a file of its,
// or (unless overwrite) a file that exists.
func checkBackupTarget(path, out string, overwrite bool) error {
	absPath, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outInfo, outErr := os.Stat(out)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
		same := absOut == absPath+suffix
		if fi, err := os.Stat(path + suffix); err == nil && outErr == nil && os.SameFile(fi, outInfo) {
			same = true
		}
		if same {
			return fmt.Errorf("the target is the database's own file %s: name another", filepath.Base(path+suffix))
		}
	}
	if outErr == nil && outInfo.IsDir() {
		return errors.New("the target is a directory: name a file in it")
	}
	if !overwrite {
		if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
			if err != nil {
				return err
			}
			return fmt.Errorf("the target: %w", fs.ErrExist)
		}
	}
	return nil
}

// vacuumInto copies the database at path into the empty file out with VACUUM INTO, on a
// read-only connection of its own.
func vacuumInto(ctx context.Context, path, out string) error {
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("open the database: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, out); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return db.Close()
}

// checkCopy runs PRAGMA quick_check (integrity_check when full) on the database at path and
// returns an error wrapping ErrCorruptCopy unless it answers ok.
func checkCopy(ctx context.Context, path string, full bool) error {
	db, err := sql.Open("sqlite", readOnlyDSN(path))
	if err != nil {
		return fmt.Errorf("check the copy: %w", err)
	}
	defer db.Close()
	pragma := "quick_check"
	if full {
		pragma = "integrity_check"
	}
	found, err := checkRows(ctx, db, "PRAGMA "+pragma+"(5)")
	switch {
	case corrupt(err):
		return fmt.Errorf("%w (PRAGMA %s: %w)", ErrCorruptCopy, pragma, err)
	case err != nil:
		return fmt.Errorf("check the copy: %w", err)
	case len(found) != 1 || found[0] != "ok":
		return fmt.Errorf("%w (PRAGMA %s: %s)", ErrCorruptCopy, pragma, strings.Join(found, "; "))
	}
	return nil
}

// checkRows returns the rows of a check pragma, one text column.
func checkRows(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		found = append(found, s)
	}
	return found, rows.Err()
}

// corrupt reports whether err is SQLite's SQLITE_CORRUPT or SQLITE_NOTADB: a check meets damage
// that it cannot step over as an error rather than a row.
func corrupt(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_CORRUPT || c == sqlite3.SQLITE_NOTADB
}

// place gives tmp the name out: a rename when overwrite, else a hard link that fails if out
// exists (a file that appeared since the check is not replaced), or a rename where the file
// system has no hard links.
func place(tmp, out string, overwrite bool) error {
	if overwrite {
		return os.Rename(tmp, out)
	}
	err := os.Link(tmp, out)
	switch {
	case err == nil:
		return os.Remove(tmp)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("the target: %w", fs.ErrExist)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.ENOSYS):
		if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the target: %w", fs.ErrExist)
		}
		return os.Rename(tmp, out)
	}
	return err
}

// syncFile flushes the file or directory at path to disk: VACUUM INTO does not, and a rename is
// durable once its directory is.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}
