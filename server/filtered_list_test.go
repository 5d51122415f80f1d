package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// fakeList is a store list of ids in ascending order, paged as hookd.ListOptions describes (and
// as package sqlite pages).
type fakeList struct {
	ids   []string
	calls int
}

func (l *fakeList) fetch(o hookd.ListOptions) (*hookd.Page[string], error) {
	l.calls++
	limit := o.Limit
	if limit <= 0 {
		limit = 50
	}
	p := &hookd.Page[string]{}
	if o.Backward && o.Iterator != "" {
		var before []string
		for _, id := range l.ids {
			if id < o.Iterator {
				before = append(before, id)
			}
		}
		more := len(before) > limit
		if more {
			before = before[len(before)-limit:]
		}
		p.Data = before
		if len(before) == 0 {
			p.Done = len(l.ids) == 0
			return p, nil
		}
		if more {
			p.PrevIterator = before[0]
		}
		last := before[len(before)-1]
		after := slices.ContainsFunc(l.ids, func(id string) bool { return id > last })
		if after {
			p.Iterator = last
		}
		p.Done = !after
		return p, nil
	}
	var rest []string
	for _, id := range l.ids {
		if id > o.Iterator {
			rest = append(rest, id)
		}
	}
	more := len(rest) > limit
	if more {
		rest = rest[:limit]
	}
	p.Data = rest
	p.Done = !more
	if len(rest) == 0 {
		return p, nil
	}
	if more {
		p.Iterator = rest[len(rest)-1]
	}
	if o.Iterator != "" && slices.ContainsFunc(l.ids, func(id string) bool { return id < rest[0] }) {
		p.PrevIterator = rest[0]
	}
	return p, nil
}

func fakeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("x_%05d", i)
	}
	return ids
}

// pageThrough follows iterators forward from the start, then prev iterators back, and returns
// every page's items both ways.
func pageThrough(t *testing.T, next batchFunc[string], limit int, keep func(*string) bool) (forward, backward [][]string) {
	t.Helper()
	id := func(s *string) string { return *s }
	opts := hookd.ListOptions{Limit: limit}
	var last *hookd.Page[string]
	for range 10000 {
		p, err := walkList(next, opts, keep, id)
		if err != nil {
			t.Fatal(err)
		}
		forward = append(forward, p.Data)
		last = p
		if p.Done {
			break
		}
		if p.Iterator == "" {
			t.Fatalf("page %d: not done and no iterator", len(forward))
		}
		opts = hookd.ListOptions{Limit: limit, Iterator: p.Iterator}
	}
	// Walk back from the last page.
	prev := last.PrevIterator
	for prev != "" {
		p, err := walkList(next, hookd.ListOptions{Limit: limit, Iterator: prev, Backward: true}, keep, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Done {
			t.Fatalf("a backward page says done")
		}
		backward = append([][]string{p.Data}, backward...)
		prev = p.PrevIterator
	}
	return forward, backward
}

func flatten(pages [][]string) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p...)
	}
	return out
}

func TestWalkListPagesEveryKeptItemOnce(t *testing.T) {
	t.Parallel()
	everyThird := func(s *string) bool {
		return strings.HasSuffix(*s, "0") || strings.HasSuffix(*s, "3") || strings.HasSuffix(*s, "6")
	}
	rare := func(s *string) bool { return *s == "x_00007" || *s == "x_11999" }
	none := func(*string) bool { return false }
	cases := []struct {
		name    string
		n       int
		limit   int
		reverse bool
		keep    func(*string) bool
	}{
		{"unfiltered", 23, 5, false, nil},
		{"unfiltered reversed", 23, 5, true, nil},
		{"unfiltered exact pages", 20, 5, false, nil},
		{"unfiltered exact pages reversed", 20, 5, true, nil},
		{"filtered", 100, 7, false, everyThird},
		{"filtered reversed", 100, 7, true, everyThird},
		{"empty", 0, 5, false, everyThird},
		{"empty reversed", 0, 5, true, nil},
		{"nothing kept", 40, 5, false, none},
		{"rare beyond the scan bound", 12000, 50, false, rare},
		{"rare beyond the scan bound reversed", 12000, 50, true, rare},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := &fakeList{ids: fakeIDs(c.n)}
			var want []string
			for _, id := range l.ids {
				if c.keep == nil || c.keep(&id) {
					want = append(want, id)
				}
			}
			if c.reverse {
				slices.Reverse(want)
			}
			next := storeBatches(l.fetch, c.reverse, "x_~")
			forward, backward := pageThrough(t, next, c.limit, c.keep)
			got := flatten(forward)
			if !slices.Equal(got, want) {
				t.Fatalf("forward: got %d items %v..., want %d", len(got), head(got), len(want))
			}
			for i, p := range forward {
				if len(p) > c.limit {
					t.Fatalf("page %d has %d items, limit %d", i, len(p), c.limit)
				}
			}
			// Going back from the last page gives every kept item before it, in order.
			if lastPage := forward[len(forward)-1]; len(lastPage) > 0 {
				before := flatten(forward[:len(forward)-1])
				if gotBack := flatten(backward); !slices.Equal(gotBack, before) {
					t.Fatalf("backward: got %d items %v..., want %d %v...", len(gotBack), head(gotBack), len(before), head(before))
				}
			}
		})
	}
}

func head(v []string) []string { return v[:min(len(v), 5)] }

func TestWalkListScanBound(t *testing.T) {
	t.Parallel()
	l := &fakeList{ids: fakeIDs(3 * maxWalkScan)}
	id := func(s *string) string { return *s }
	p, err := walkList(storeBatches(l.fetch, false, ""), hookd.ListOptions{Limit: 10}, func(*string) bool { return false }, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data) != 0 || p.Done || p.Iterator == "" {
		t.Fatalf("got %d items, done %t, iterator %q: want an empty page that continues", len(p.Data), p.Done, p.Iterator)
	}
	if want := l.ids[maxWalkScan-1]; p.Iterator != want {
		t.Fatalf("iterator %q, want %q (the last item read)", p.Iterator, want)
	}
	if max := maxWalkScan/walkBatch + 1; l.calls > max {
		t.Fatalf("%d store reads for one page, at most %d", l.calls, max)
	}
}
