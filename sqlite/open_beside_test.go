//go:build unix

package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// openBeside opens path with Config.Beside, closed when t ends.
func openBeside(t *testing.T, path string) (*sqlite.Store, error) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, &sqlite.Config{Beside: true})
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// TestOpenBeside: a file another store holds opens beside it with Config.Beside, and only so;
// each sees what the other writes; the store beside runs no queue, and closing it leaves the
// holder's lock in place.
func TestOpenBeside(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	holder := open(t, path)
	q, err := holder.NewQueue(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx, func(ctx context.Context, j hookd.Job) error { return nil }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	if holder.OpenedBeside() {
		t.Error("the holder reports OpenedBeside")
	}

	if _, err := sqlite.Open(ctx, path, nil); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("Open without Beside on a held file: %v, want ErrLocked", err)
	}
	beside, err := openBeside(t, path)
	if err != nil {
		t.Fatalf("Open with Beside on a held file: %v", err)
	}
	if !beside.OpenedBeside() {
		t.Error("the store beside does not report OpenedBeside")
	}

	insertApp := func(s *sqlite.Store, id string) {
		t.Helper()
		if err := s.InTx(ctx, func(tx hookd.Tx) error {
			return tx.InsertApplication(ctx, &hookd.Application{ID: id, UID: id, Name: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	insertApp(holder, "app_holder")
	insertApp(beside, "app_beside")
	for _, s := range []*sqlite.Store{holder, beside} {
		for _, id := range []string{"app_holder", "app_beside"} {
			if _, err := s.GetApplication(ctx, id); err != nil {
				t.Errorf("OpenedBeside %v: GetApplication(%s): %v", s.OpenedBeside(), id, err)
			}
		}
	}

	if _, err := beside.NewQueue(nil); !errors.Is(err, sqlite.ErrBeside) {
		t.Errorf("NewQueue beside: %v, want ErrBeside", err)
	}
	if _, err := hookd.NewClient(beside, nil); !errors.Is(err, sqlite.ErrBeside) {
		t.Errorf("NewClient on the store beside: %v, want ErrBeside", err)
	}

	if err := beside.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path, nil); !errors.Is(err, sqlite.ErrLocked) {
		t.Errorf("Open after the store beside closed: %v, want ErrLocked (the holder still has the file)", err)
	}
}

// TestOpenBesideFreeFile: with no process holding the file, Open with Beside takes it as usual.
func TestOpenBesideFreeFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s, err := openBeside(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if s.OpenedBeside() {
		t.Error("a free file was opened beside")
	}
	if _, err := sqlite.Open(t.Context(), path, nil); !errors.Is(err, sqlite.ErrLocked) {
		t.Errorf("a second Open: %v, want ErrLocked", err)
	}
}

// TestOpenBesideRefusesOtherSchema: a held file whose recorded migrations are not this build's,
// fewer or more, is refused with a *SchemaError naming the versions, and is not migrated.
func TestOpenBesideRefusesOtherSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	holder := open(t, path)
	var last int
	if err := holder.DB().QueryRowContext(ctx, `SELECT max(version) FROM hookd_migrations`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	var name, checksum string
	var appliedAt int64
	if err := holder.DB().QueryRowContext(ctx, `SELECT name, checksum, applied_at FROM hookd_migrations WHERE version = ?`, last).Scan(&name, &checksum, &appliedAt); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		change, undo     string
		pending, unknown []int
	}{
		{"an earlier release's file", `DELETE FROM hookd_migrations WHERE version = ?`,
			`INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`, []int{last}, nil},
		{"a later release's file", `INSERT INTO hookd_migrations (version, name, applied_at) VALUES (? + 1000, 'later', 0)`,
			`DELETE FROM hookd_migrations WHERE version = ? + 1000`, nil, []int{last + 1000}},
	} {
		if _, err := holder.DB().ExecContext(ctx, tc.change, last); err != nil {
			t.Fatal(err)
		}
		_, err := openBeside(t, path)
		var se *sqlite.SchemaError
		if !errors.Is(err, sqlite.ErrSchemaDiffers) || !errors.As(err, &se) ||
			!slices.Equal(se.Pending, tc.pending) || !slices.Equal(se.Unknown, tc.unknown) {
			t.Errorf("%s: Open beside: %v (%+v), want a *SchemaError with pending %v, unknown %v", tc.name, err, se, tc.pending, tc.unknown)
		}
		var n int
		if err := holder.DB().QueryRowContext(ctx, `SELECT count(*) FROM hookd_migrations WHERE version = ?`, last).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := len(tc.pending) == 0; (n == 1) != want {
			t.Errorf("%s: migration %d recorded %d times after the refusal: the store beside migrated", tc.name, last, n)
		}
		// The undo of the deletion puts the row back as it was; the other's takes only the version.
		if _, err := holder.DB().ExecContext(ctx, tc.undo, []any{last, name, checksum, appliedAt}[:strings.Count(tc.undo, "?")]...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openBeside(t, path); err != nil {
		t.Errorf("Open beside once the schema is this build's again: %v", err)
	}
}

// TestOpenBesideMissingFile: a held lock without a database (its holder about to create it)
// opens nothing beside it, and creates no database.
func TestOpenBesideMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "hookd.db")
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := openBeside(t, path); err == nil {
		t.Fatal("Open beside a lock with no database succeeded")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database exists after the refusal: %v", err)
	}
}
