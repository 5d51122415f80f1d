package server

import (
	"net/http"

	"github.com/hookd/hookd"
)

// listOut is Svix's list envelope. Iterator and PrevIterator are always present (null when
// empty): the Go SDK v1.44.0 requires the iterator key.
type listOut[T any] struct {
	Data         []T     `json:"data"`
	Iterator     *string `json:"iterator"`
	PrevIterator *string `json:"prevIterator"`
	Done         bool    `json:"done"`
}

// listOptions reads limit (1 to 250, default 50) and iterator. An iterator may come as
// prev_iterator-style "-<id>" meaning the page before <id>, which is how listOut's PrevIterator
// is written.
func listOptions(r *http.Request) (hookd.ListOptions, error) {
	limit, err := queryInt(r, "limit", 50, 1, 250)
	if err != nil {
		return hookd.ListOptions{}, err
	}
	it := r.URL.Query().Get("iterator")
	opts := hookd.ListOptions{Limit: limit, Iterator: it}
	if len(it) > 1 && it[0] == '-' {
		opts.Iterator, opts.Backward = it[1:], true
	}
	return opts, nil
}

// toList converts a page with f.
func toList[T, U any](p *hookd.Page[T], f func(*T) U) listOut[U] {
	out := listOut[U]{Data: make([]U, 0, len(p.Data)), Done: p.Done}
	for i := range p.Data {
		out.Data = append(out.Data, f(&p.Data[i]))
	}
	if p.Iterator != "" {
		it := p.Iterator
		out.Iterator = &it
	}
	if p.PrevIterator != "" {
		prev := "-" + p.PrevIterator
		out.PrevIterator = &prev
	}
	return out
}
