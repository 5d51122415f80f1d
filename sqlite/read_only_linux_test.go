//go:build linux

package sqlite_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/fsfault"
	"github.com/hookd/hookd/sqlite"
)

// TestOpenReadOnly: Open refuses a database it could only read with an error wrapping
// sqlite.ErrReadOnly that says to check the permissions, and writes nothing: a read-only file
// (which SQLite would open read-only without a word, every write failing later), a read-only
// directory without the file, and one with it.
func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range fsfault.ReadOnlyDatabases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := tc.Make(t, dir)
			before := listing(t, dir)
			s, err := sqlite.Open(t.Context(), path, nil)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded on a read-only database")
			}
			if !errors.Is(err, sqlite.ErrReadOnly) {
				t.Fatalf("Open: %v, want an error wrapping sqlite.ErrReadOnly", err)
			}
			// Every error of Open names the path; the hint names the files beside it too.
			if msg := err.Error(); !strings.Contains(msg, filepath.Base(path)+"-wal") || !strings.Contains(msg, "permissions") {
				t.Errorf("Open: %q does not name the files and say to check the permissions", msg)
			}
			if after := listing(t, dir); !slices.Equal(after, before) {
				t.Errorf("Open wrote beside the database: %v, was %v", after, before)
			}
			t.Log(err)
		})
	}
}

// listing returns the names in dir with their sizes and times.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", e.Name(), fi.Size(), fi.ModTime()))
	}
	return out
}
