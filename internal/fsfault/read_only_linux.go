package fsfault

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hookd/hookd/sqlite"
)

// ReadOnlyDatabase is a way a hookd SQLite database can be read-only to this process.
type ReadOnlyDatabase struct {
	Name string
	// Make makes the database hookd.db in dir read-only this way (see ReadOnly) and returns its
	// path.
	Make func(t testing.TB, dir string) string
}

// ReadOnlyDatabases are the read-only databases hookd must refuse to open: a read-only file
// (which SQLite would open read-only without a word), a read-only directory without the file,
// and one with it.
var ReadOnlyDatabases = []ReadOnlyDatabase{
	{"file", func(t testing.TB, dir string) string {
		path := createDatabase(t, dir)
		ReadOnly(t, path)
		return path
	}},
	{"directory", func(t testing.TB, dir string) string {
		ReadOnly(t, dir)
		return filepath.Join(dir, "hookd.db")
	}},
	{"directory with the file", func(t testing.TB, dir string) string {
		path := createDatabase(t, dir)
		ReadOnly(t, dir)
		return path
	}},
}

// createDatabase creates the hookd database hookd.db in dir and returns its path.
func createDatabase(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "hookd.db")
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
