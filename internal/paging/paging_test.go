package paging

import (
	"slices"
	"testing"
)

func TestLimit(t *testing.T) {
	for n, want := range map[int]int{-1: DefaultLimit, 0: DefaultLimit, 1: 1, 250: 250, 251: MaxLimit} {
		if got := Limit(n); got != want {
			t.Errorf("Limit(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestBuild pages through the keys a..e, two at a time, as a store would read them.
func TestBuild(t *testing.T) {
	all := []string{"a", "b", "c", "d", "e"}
	key := func(s *string) string { return *s }
	// read returns what a store reads after bound, ascending or not, limit+1 at most, and the
	// exists it would answer with.
	read := func(bound string, ascending bool, n int) []string {
		var out []string
		for _, k := range all {
			if bound == "" || (ascending && k > bound) || (!ascending && k < bound) {
				out = append(out, k)
			}
		}
		if !ascending {
			slices.Reverse(out)
		}
		return out[:min(n, len(out))]
	}
	exists := func(bound string, ascending bool) (bool, error) { return len(read(bound, ascending, 1)) > 0, nil }

	p, err := Build(read("", true, 3), 2, false, true, "", key, exists)
	if err != nil || !slices.Equal(p.Data, []string{"a", "b"}) || p.Iterator != "b" || p.PrevIterator != "" || p.Done {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	p, _ = Build(read("b", true, 3), 2, false, true, "b", key, exists)
	if !slices.Equal(p.Data, []string{"c", "d"}) || p.Iterator != "d" || p.PrevIterator != "c" || p.Done {
		t.Fatalf("second page: %+v", p)
	}
	p, _ = Build(read("d", true, 3), 2, false, true, "d", key, exists)
	if !slices.Equal(p.Data, []string{"e"}) || p.Iterator != "" || p.PrevIterator != "e" || !p.Done {
		t.Fatalf("last page: %+v", p)
	}
	// Backward from the last page's PrevIterator gives the second page again.
	p, _ = Build(read("e", false, 3), 2, true, true, "e", key, exists)
	if !slices.Equal(p.Data, []string{"c", "d"}) || p.Iterator != "d" || p.PrevIterator != "c" || p.Done {
		t.Fatalf("backward page: %+v", p)
	}
	// Backward past the start: an empty page, not Done, since items follow it.
	p, _ = Build(read("a", false, 3), 2, true, true, "a", key, exists)
	if len(p.Data) != 0 || p.Done {
		t.Fatalf("backward past the start: %+v", p)
	}
	all = nil
	p, _ = Build(read("", true, 3), 2, false, true, "", key, exists)
	if len(p.Data) != 0 || !p.Done {
		t.Fatalf("empty list: %+v", p)
	}
}
