package fsfault

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs of size (e.g. "16m") on a new directory, unmounted when the test
// ends, and returns the directory. It skips the test where mounting is not permitted.
func MountTmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	// MNT_DETACH: a process the test started may still hold files on it.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes the file name until its file system is full.
func Fill(name string) error {
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

// ReadOnly makes path, a file or a directory, read-only to this process until the test ends: by
// its mode for a user, and for root (whom modes do not stop) by a read-only bind mount over it.
// It skips the test where neither works.
func ReadOnly(t testing.TB, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, fi.Mode().Perm()) })
		return
	}
	if err := syscall.Mount(path, path, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("bind-mount %s read-only (root ignores file modes; needs CAP_SYS_ADMIN): %v", path, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(path, syscall.MNT_DETACH) })
	if err := syscall.Mount("", path, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("remount %s read-only: %v", path, err)
	}
}

// Immutable returns a function that sets (true) or clears (false) the immutable attribute
// (chattr +i) of files, after skipping the test unless the attribute makes the kernel refuse a
// write through a descriptor opened before it was set (ext4 does on current kernels), as a file
// system gone read-only under a running process does: it tries on a file of its own, probe. The
// attribute is cleared when the test ends, or its temporary directory could not be removed. It
// needs root and chattr.
func Immutable(t testing.TB, probe string, files ...string) func(on bool) error {
	t.Helper()
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if out, err := exec.Command("chattr", "+i", probe).CombinedOutput(); err != nil {
		t.Skipf("chattr +i (needs root and a file system with the immutable attribute, e.g. ext4): %v %s", err, out)
	}
	_, werr := f.Write([]byte("x"))
	if out, err := exec.Command("chattr", "-i", probe).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i: %v %s", err, out)
	}
	if werr == nil {
		t.Skip("this file system lets a descriptor opened before chattr +i write on: the attribute cannot take write access away from a running process")
	}
	set := func(on bool) error {
		flag := "-i"
		if on {
			flag = "+i"
		}
		if out, err := exec.Command("chattr", append([]string{flag}, files...)...).CombinedOutput(); err != nil {
			return errors.New("chattr " + flag + ": " + err.Error() + ": " + string(out))
		}
		return nil
	}
	t.Cleanup(func() { _ = set(false) })
	return set
}
