package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrReadOnly: Open cannot write the database: the file, a file beside it (-wal, -shm, .lock),
// its directory or its file system is read-only to this process. The error says what to check.
var ErrReadOnly = errors.New("the database is read-only")

// checkWritable returns an error wrapping ErrReadOnly when the database file, or its -wal or -shm
// file, exists but cannot be opened for writing. SQLite would open such a file read-only without
// a word, and every write would fail later. It runs under the process lock, so that no connection
// of this process has the files open: closing a descriptor of a file drops the POSIX locks SQLite
// holds on it.
func checkWritable(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return readOnly(path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("check %s: %w", p, err)
		}
	}
	return nil
}

// openFault adds what to do to err, met while opening the database at path, when it says the
// files cannot be written: see readOnly; the disk full or an I/O error wraps hookd.ErrUnavailable
// and says to check the file system. Any other error comes back as it is.
func openFault(path string, err error) error {
	if err = readOnly(path, err); errors.Is(err, ErrReadOnly) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) || !fileFault(se.Code()) {
		return err
	}
	return fmt.Errorf("%w; check that the file system of %s has free space (df) and reports no I/O errors (dmesg)",
		unavailable(err), filepath.Dir(path))
}

// readOnly wraps err, met while opening the database at path, with ErrReadOnly and what to do
// when it says a file or the directory is read-only (permission denied, a read-only file system,
// SQLITE_READONLY); any other error comes back as it is.
func readOnly(path string, err error) error {
	var se *sqlite.Error
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) &&
		!(errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_READONLY) {
		return err
	}
	base := filepath.Base(path)
	return fmt.Errorf("%w (%w); hookd writes the file and creates %s-wal, %s-shm and %s.lock beside it: "+
		"check that the user hookd runs as may write the file and its directory (owner and permissions), "+
		"and that the file system is not mounted read-only", ErrReadOnly, err, base, base, base)
}
