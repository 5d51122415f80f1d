//go:build linux

package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/fsfault"
	"github.com/hookd/hookd/sqlite"
)

// TestDiskFull fills the file system of the store for real: a 16 MiB tmpfs, and a file written
// beside the database until the kernel answers ENOSPC. Sends then fail with
// hookd.ErrUnavailable and leave nothing behind; once the file is removed they succeed again and
// the workers finish every delivery, without a restart. It mounts, so it needs root (or
// CAP_SYS_ADMIN) and skips without.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	dir := fsfault.MountTmpfs(t, "16m")
	filler := filepath.Join(dir, "filler")
	outage(t, filepath.Join(dir, "hookd.db"),
		func(*sqlite.Store) error { return fsfault.Fill(filler) },
		func(*sqlite.Store) error { return os.Remove(filler) })
}

// TestOpenDiskFull: Open on a full disk fails with an error wrapping hookd.ErrUnavailable that
// says to check the free space, for a new file and for an existing one, and succeeds once space
// returns. It mounts, so it needs root (or CAP_SYS_ADMIN) and skips without.
func TestOpenDiskFull(t *testing.T) {
	t.Parallel()
	dir := fsfault.MountTmpfs(t, "4m")
	existing, created := filepath.Join(dir, "existing.db"), filepath.Join(dir, "new.db")
	s, err := sqlite.Open(t.Context(), existing, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := fsfault.Fill(filler); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{existing, created} {
		s, err := sqlite.Open(t.Context(), path, nil)
		if err == nil {
			s.Close()
			t.Fatalf("Open %s succeeded on a full disk", path)
		}
		if !errors.Is(err, hookd.ErrUnavailable) || !strings.Contains(err.Error(), "free space") {
			t.Errorf("Open %s on a full disk: %v; want an error wrapping hookd.ErrUnavailable that says to check the free space", filepath.Base(path), err)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{existing, created} {
		open(t, path)
	}
}

// TestFileMadeImmutable takes write access away from the open database: the immutable attribute
// (chattr +i) on the file and its -wal makes the kernel refuse writes even through descriptors
// already open (ext4 does; the test checks first), as a file system gone read-only under a running
// process does, and SQLite reports SQLITE_IOERR_WRITE. Sends fail with hookd.ErrUnavailable; with the attribute
// removed they succeed again without a restart. It needs root and a file system with the
// attribute, and skips without. (A file system the kernel remounts read-only after I/O errors
// cannot be made writable again while files on it are open, so that outage needs a restart; it is
// not simulated here.)
func TestFileMadeImmutable(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	immutable := fsfault.Immutable(t, filepath.Join(filepath.Dir(path), "probe"), path, path+"-wal")
	outage(t, path,
		func(*sqlite.Store) error { return immutable(true) },
		func(*sqlite.Store) error { return immutable(false) })
}
