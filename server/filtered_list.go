package server

import (
	"slices"

	"github.com/hookd/hookd"
)

// Some of Svix's list filters have no counterpart in hookd's store filters (an attempt's status
// code class, a delivery's channel), and some lists run opposite to the store's order (attempted
// messages are newest first, deliveries are stored oldest first). walkList pages such a list: it
// reads the store's list in batches, in either direction, keeps what the filter accepts, and
// writes iterators that continue exactly where it stopped.

// maxWalkScan bounds the items one filtered page reads. A page that reaches it comes back short
// (possibly empty) with an iterator that continues past what was read, and done false.
const maxWalkScan = 5000

// walkBatch is the batch size of a filtered walk (the store's largest page).
const walkBatch = 250

// batchFunc reads up to n items of a list beyond cursor (exclusive; "" for the start of the walk),
// walking the API's order forward or backward, nearest first. exhausted is true when nothing lies
// beyond the items returned.
type batchFunc[T any] func(cursor string, backward bool, n int) (items []T, exhausted bool, err error)

// storeBatches reads a store list (paged as hookd.ListOptions describes) as batches. With reverse
// the API's order is the opposite of the store's, and end must sort after every id of the list in
// the store's order: a walk from the start begins there.
func storeBatches[T any](fetch func(hookd.ListOptions) (*hookd.Page[T], error), reverse bool, end string) batchFunc[T] {
	return func(cursor string, backward bool, n int) ([]T, bool, error) {
		opts := hookd.ListOptions{Limit: n, Iterator: cursor}
		if backward == reverse {
			// The store's own direction.
			p, err := fetch(opts)
			if err != nil {
				return nil, false, err
			}
			return p.Data, p.Done, nil
		}
		if opts.Iterator == "" {
			if end == "" {
				return nil, true, nil
			}
			opts.Iterator = end
		}
		opts.Backward = true
		p, err := fetch(opts)
		if err != nil {
			return nil, false, err
		}
		items := slices.Clone(p.Data)
		slices.Reverse(items)
		return items, p.PrevIterator == "", nil
	}
}

// walkList returns the page opts asks for of the items keep accepts (every item when keep is
// nil), in the API's order, with iterators in the store's terms (toList writes them).
func walkList[T any](next batchFunc[T], opts hookd.ListOptions, keep func(*T) bool, id func(*T) string) (*hookd.Page[T], error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	batch := limit
	if keep != nil {
		batch = walkBatch
	}
	backward := opts.Backward && opts.Iterator != ""
	var (
		kept      []T
		cursor    = opts.Iterator
		scanned   int
		reachedTo bool   // nothing lies beyond what was read
		stoppedAt string // set when the scan bound stopped the walk: the last id read
	)
walk:
	for {
		items, exhausted, err := next(cursor, backward, batch)
		if err != nil {
			return nil, err
		}
		for i := range items {
			scanned++
			if keep != nil && !keep(&items[i]) {
				continue
			}
			kept = append(kept, items[i])
			if len(kept) == limit {
				reachedTo = exhausted && i == len(items)-1
				break walk
			}
		}
		if exhausted || len(items) == 0 {
			reachedTo = true
			break
		}
		cursor = id(&items[len(items)-1])
		if scanned >= maxWalkScan {
			stoppedAt = cursor
			break
		}
	}
	if kept == nil {
		kept = []T{}
	}
	page := &hookd.Page[T]{Data: kept}
	if !backward {
		page.Done = reachedTo
		switch {
		case reachedTo:
		case stoppedAt != "":
			page.Iterator = stoppedAt
		default:
			page.Iterator = id(&kept[len(kept)-1])
		}
		if opts.Iterator != "" && len(kept) > 0 {
			page.PrevIterator = id(&kept[0])
		}
		return page, nil
	}
	// A backward page precedes opts.Iterator, which is in the list: it is never the last page.
	slices.Reverse(kept)
	switch {
	case reachedTo:
	case stoppedAt != "":
		page.PrevIterator = stoppedAt
	default:
		page.PrevIterator = id(&kept[0])
	}
	switch {
	case len(kept) > 0:
		page.Iterator = id(&kept[len(kept)-1])
	case stoppedAt != "":
		page.Iterator = stoppedAt
	}
	return page, nil
}
