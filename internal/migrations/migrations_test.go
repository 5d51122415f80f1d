package migrations

import (
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	got, err := Load(fstest.MapFS{
		"migrations/0010_later.sql": {Data: []byte("B")},
		"migrations/0002_first.sql": {Data: []byte("A")},
		"other/0001_ignored.sql":    {Data: []byte("x")},
		"migrations/released.txt":   {Data: []byte("x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	// sha256 of "A" and of "B", as sha256sum prints them.
	want := []Migration{
		{2, "0002_first", "A", "559aead08264d5795d3909718cdd05abd49572e84fe55590eef31a88a08fdffd"},
		{10, "0010_later", "B", "df7e70e5021544f4834bbee64a9e3789febc4be81470df629cad6ddb03320a5c"},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Load = %+v, want %+v", got, want)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no version":     {"migrations/first.sql": {}},
		"zero version":   {"migrations/0000_x.sql": {}},
		"shared version": {"migrations/0001_a.sql": {}, "migrations/01_b.sql": {}},
	} {
		if _, err := Load(fsys); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
