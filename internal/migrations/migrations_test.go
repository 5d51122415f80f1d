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
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (Migration{2, "0002_first", "A"}) || got[1] != (Migration{10, "0010_later", "B"}) {
		t.Fatalf("Load = %+v", got)
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
