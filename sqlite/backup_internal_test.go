package sqlite

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckCopyFindsDamage: a file whose pages were overwritten fails both checks with
// ErrCorruptCopy; one whose index no longer matches its table fails the full check only (quick
// does not compare indexes with tables); the file before the damage passes both.
func TestCheckCopyFindsDamage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		damage      func(t *testing.T, path string, pageSize int64)
		quick, full bool // the check finds it
	}{
		{"pages overwritten", overwritePages, true, true},
		{"index of another column", redefineIndex, false, true},
	} {
		path := filepath.Join(t.TempDir(), "copy.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT);
			CREATE INDEX t_body ON t (body);
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
			INSERT INTO t SELECT i, printf('row %d', i) FROM n`); err != nil {
			t.Fatal(err)
		}
		var pageSize int64
		if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		for _, full := range []bool{false, true} {
			if err := checkCopy(t.Context(), path, full); err != nil {
				t.Fatalf("%s, full check %v: the undamaged file: %v", tc.name, full, err)
			}
		}
		tc.damage(t, path, pageSize)
		for full, want := range map[bool]bool{false: tc.quick, true: tc.full} {
			err := checkCopy(t.Context(), path, full)
			if got := errors.Is(err, ErrCorruptCopy); got != want || (!got && err != nil) {
				t.Errorf("%s, full check %v: %v; want ErrCorruptCopy %v", tc.name, full, err, want)
			}
			t.Logf("%s, full check %v: %v", tc.name, full, err)
		}
	}
}

// overwritePages writes over the cells of pages 2 and 4, of the table's and the index's b-trees.
func overwritePages(t *testing.T, path string, pageSize int64) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	garbage := []byte{0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5}
	for _, page := range []int64{2, 4} {
		if _, err := f.WriteAt(garbage, page*pageSize-40); err != nil {
			t.Fatal(err)
		}
	}
}

// redefineIndex makes the schema say that the index t_body is on id: its entries, of body, no
// longer match the table.
func redefineIndex(t *testing.T, path string, _ int64) {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA writable_schema = ON;
		UPDATE sqlite_schema SET sql = 'CREATE INDEX t_body ON t (id)' WHERE name = 't_body'`); err != nil {
		t.Fatal(err)
	}
}
