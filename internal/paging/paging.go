// Package paging is what hookd's SQL stores share of Svix-style paging: the page size a request
// gets, and the page built from the rows a store read.
package paging

import (
	"slices"

	"github.com/hookd/hookd"
)

// Page sizes: a list returns DefaultLimit items unless asked for a limit, and never more than
// MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 250
)

// Limit returns the page size for a requested limit n.
func Limit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// Build makes a page of limit items from data, the rows a store read in reading order (opposite
// to list order when backward), at most limit+1 of them: one more than fits says more follow.
// keyOf gives an item's key (its id); exists reports whether a row lies beyond bound ("" for
// none) in a direction (ascending in key order or not), and forward is the list's direction in
// key order.
//
// A page's Iterator is its last item's key when an item follows it (else "" and Done); its
// PrevIterator is its first item's key when an item precedes it (else ""). An empty page has
// neither, and is Done unless it was asked for backward and items exist (they all follow it: the
// next page, with Iterator "", is the first).
func Build[T any](data []T, limit int, backward, forward bool, iterator string,
	keyOf func(*T) string, exists func(bound string, ascending bool) (bool, error),
) (*hookd.Page[T], error) {
	more := len(data) > limit // more items beyond this page in the direction read
	if more {
		data = data[:limit]
	}
	page := &hookd.Page[T]{}
	if backward {
		slices.Reverse(data)
	}
	page.Data = data
	if len(data) == 0 {
		page.Done = true
		if backward {
			found, err := exists("", forward)
			if err != nil {
				return nil, err
			}
			page.Done = !found
		}
		return page, nil
	}
	first, last := keyOf(&data[0]), keyOf(&data[len(data)-1])
	if backward {
		if more {
			page.PrevIterator = first
		}
		after, err := exists(last, forward)
		if err != nil {
			return nil, err
		}
		if after {
			page.Iterator = last
		}
		page.Done = !after
		return page, nil
	}
	if more {
		page.Iterator = last
	}
	page.Done = !more
	if iterator != "" {
		before, err := exists(first, !forward)
		if err != nil {
			return nil, err
		}
		if before {
			page.PrevIterator = first
		}
	}
	return page, nil
}

// BuildAfter makes the page of a newest-first list asked for the items from a time on, with no
// iterator: data are the rows from that time read oldest first, at most limit+1 of them. As
// Svix's server does, the page holds the oldest limit of them, reversed into list order, so a
// sync that lists after the last time it saw misses nothing. PrevIterator (to walk on to newer
// items) is the page's first key; Iterator its last key when more items follow in the direction
// read, and Done tells that none do.
func BuildAfter[T any](data []T, limit int, keyOf func(*T) string) *hookd.Page[T] {
	more := len(data) > limit
	if more {
		data = data[:limit]
	}
	if data == nil {
		data = []T{}
	}
	slices.Reverse(data)
	page := &hookd.Page[T]{Data: data, Done: !more}
	if len(data) == 0 {
		return page
	}
	page.PrevIterator = keyOf(&data[0])
	if more {
		page.Iterator = keyOf(&data[len(data)-1])
	}
	return page
}
