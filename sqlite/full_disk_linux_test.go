//go:build linux

package sqlite_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestDiskFull fills the file system of the store for real: a 16 MiB tmpfs, and a file written
// beside the database until the kernel answers ENOSPC. Sends then fail with
// hookd.ErrUnavailable and leave nothing behind; once the file is removed they succeed again and
// the workers finish every delivery, without a restart. It mounts, so it needs root (or
// CAP_SYS_ADMIN) and skips without.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, "16m")
	filler := filepath.Join(dir, "filler")
	outage(t, filepath.Join(dir, "hookd.db"),
		func(*sqlite.Store) error { return fillDisk(filler) },
		func(*sqlite.Store) error { return os.Remove(filler) })
}

// TestOpenDiskFull: Open on a full disk fails with an error wrapping hookd.ErrUnavailable that
// says to check the free space, for a new file and for an existing one, and succeeds once space
// returns. It mounts, so it needs root (or CAP_SYS_ADMIN) and skips without.
func TestOpenDiskFull(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, "4m")
	existing, created := filepath.Join(dir, "existing.db"), filepath.Join(dir, "new.db")
	s, err := sqlite.Open(t.Context(), existing, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := fillDisk(filler); err != nil {
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
	files := []string{path, path + "-wal"}
	probe := filepath.Join(filepath.Dir(path), "probe")
	immutableStopsWrites(t, probe)
	immutable := func(on bool) error {
		flag := "-i"
		if on {
			flag = "+i"
		}
		if out, err := exec.Command("chattr", append([]string{flag}, files...)...).CombinedOutput(); err != nil {
			return errors.New("chattr " + flag + ": " + err.Error() + ": " + string(out))
		}
		return nil
	}
	t.Cleanup(func() { _ = immutable(false) }) // or the temporary directory cannot be removed
	outage(t, path,
		func(*sqlite.Store) error { return immutable(true) },
		func(*sqlite.Store) error { return immutable(false) })
}

// immutableStopsWrites skips the test unless the immutable attribute (chattr +i) on the file name,
// created here, makes the kernel refuse a write through a descriptor opened before it was set
// (ext4 does on current kernels). It needs root and chattr.
func immutableStopsWrites(t *testing.T, name string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if out, err := exec.Command("chattr", "+i", name).CombinedOutput(); err != nil {
		t.Skipf("chattr +i (needs root and a file system with the immutable attribute, e.g. ext4): %v %s", err, out)
	}
	_, werr := f.Write([]byte("x"))
	if out, err := exec.Command("chattr", "-i", name).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i: %v %s", err, out)
	}
	if werr == nil {
		t.Skip("this file system lets a descriptor opened before chattr +i write on: the attribute cannot take write access away from a running process")
	}
}

// mountTmpfs mounts a tmpfs of size (e.g. "16m") on a new directory, unmounted when the test ends,
// and returns the directory. It skips the test where mounting is not permitted.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes the file name until its file system is full.
func fillDisk(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}
