package server

import (
	"net/http"
	"strings"

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

// iteratorKind is what a list's iterator must be: an id of the listed kind (its prefix), an
// event type name, or anything (a list whose iterators are not Svix's kind of id).
type iteratorKind string

const (
	iterateApps       iteratorKind = "app_"
	iterateEndpoints  iteratorKind = "ep_"
	iterateMessages   iteratorKind = "msg_"
	iterateAttempts   iteratorKind = "atmpt_"
	iterateEventTypes iteratorKind = "name"
	iterateAny        iteratorKind = ""
)

// maxEventTypeIterator is the longest event type name, so the longest name iterator.
const maxEventTypeIterator = 256

// check refuses an iterator (without its "-") of another kind, as Svix parses the iterator into
// the listed kind's id type: an id of another prefix is "Invalid id. Expected different prefix",
// a name out of the event type pattern is refused as the name would be.
func (k iteratorKind) check(it string) error {
	switch k {
	case iterateAny:
		return nil
	case iterateEventTypes:
		if it == "" || len(it) > maxEventTypeIterator || !svixID.MatchString(it) {
			return invalidField("query", "iterator", "String must match the following pattern: [a-zA-Z0-9\\-_.], at most 256 characters")
		}
		return nil
	}
	if !strings.HasPrefix(it, string(k)) || !svixID.MatchString(it) {
		return invalidField("query", "iterator", "Invalid id. Expected different prefix ("+string(k)+")")
	}
	return nil
}

// listOptions reads limit (1 to 250, default 50) and iterator, which must be of kind. An
// iterator may come as prev_iterator-style "-<id>" meaning the page before <id>, which is how
// listOut's PrevIterator is written.
func listOptions(r *http.Request, kind iteratorKind) (hookd.ListOptions, error) {
	limit, err := queryInt(r, "limit", 50, 1, 250)
	if err != nil {
		return hookd.ListOptions{}, err
	}
	it := r.URL.Query().Get("iterator")
	opts := hookd.ListOptions{Limit: limit, Iterator: it}
	if strings.HasPrefix(it, "-") {
		opts.Iterator, opts.Backward = it[1:], true
	}
	if it != "" {
		if err := kind.check(opts.Iterator); err != nil {
			return hookd.ListOptions{}, err
		}
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
