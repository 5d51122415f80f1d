package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hookd/hookd"
)

// checkPaging walks a list whose items are want (ids in list order) with every page size from 1
// to len(want)+1: forwards from the start, then backwards with Backward from the last page, and
// checks each page's items, Iterator, PrevIterator and Done.
func checkPaging[T any](t *testing.T, what string, want []string, list func(hookd.ListOptions) (*hookd.Page[T], error), id func(T) string) {
	t.Helper()
	n := len(want)
	for limit := 1; limit <= n+1; limit++ {
		var pages [][]string
		for i := 0; i < n; i += limit {
			pages = append(pages, want[i:min(i+limit, n)])
		}
		iter := ""
		var last *hookd.Page[T]
		for p, exp := range pages {
			page, err := list(hookd.ListOptions{Limit: limit, Iterator: iter})
			name := fmt.Sprintf("%s, limit %d, page %d forwards", what, limit, p)
			checkPage(t, name, page, err, exp, p > 0, p < len(pages)-1, id)
			iter, last = page.Iterator, page
		}
		prev := last.PrevIterator
		for p := len(pages) - 2; p >= 0; p-- {
			page, err := list(hookd.ListOptions{Limit: limit, Iterator: prev, Backward: true})
			name := fmt.Sprintf("%s, limit %d, page %d backwards", what, limit, p)
			checkPage(t, name, page, err, pages[p], p > 0, true, id)
			prev = page.PrevIterator
		}
	}
}

func checkPage[T any](t *testing.T, name string, page *hookd.Page[T], err error, want []string, hasPrev, hasNext bool, id func(T) string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := ids(page.Data, id)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: want items %v, got %v", name, want, got)
	}
	wantIter, wantPrev := "", ""
	if hasNext && len(want) > 0 {
		wantIter = want[len(want)-1]
	}
	if hasPrev && len(want) > 0 {
		wantPrev = want[0]
	}
	if page.Iterator != wantIter || page.PrevIterator != wantPrev || page.Done != !hasNext {
		t.Fatalf("%s: want Iterator %q, PrevIterator %q, Done %t; got %q, %q, %t",
			name, wantIter, wantPrev, !hasNext, page.Iterator, page.PrevIterator, page.Done)
	}
}

// reversed returns a reversed copy of s.
func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

const pageItems = 7

var pagingTests = []test{
	{"Applications", func(t *testing.T, f *fixture) {
		var want []string
		for range pageItems {
			want = append(want, f.newApp().ID)
		}
		checkPaging(t, "applications", want, func(o hookd.ListOptions) (*hookd.Page[hookd.Application], error) {
			return f.store.ListApplications(f.ctx, o)
		}, applicationID)
	}},
	{"Endpoints", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		var want []string
		for i := range pageItems {
			want = append(want, f.newEndpoint(app.ID).ID)
			if i%3 == 0 {
				f.newEndpoint(other.ID)
			}
		}
		checkPaging(t, "endpoints", want, func(o hookd.ListOptions) (*hookd.Page[hookd.Endpoint], error) {
			return f.store.ListEndpoints(f.ctx, app.ID, o)
		}, endpointID)
	}},
	{"EventTypes", func(t *testing.T, f *fixture) {
		names := []string{"user:created", "Invoice.paid", "a.b", "invoice.paid", "USER.created", "invoice.paid.v2", "z"}
		for i, name := range names {
			f.upsertEventType(hookd.EventType{Name: name, CreatedAt: at(i), UpdatedAt: at(i)})
			f.upsertEventType(hookd.EventType{Name: name + "~archived", Archived: true, CreatedAt: at(i), UpdatedAt: at(i)})
		}
		want := slices.Clone(names)
		slices.Sort(want) // bytewise: upper case before lower case
		checkPaging(t, "event types", want, func(o hookd.ListOptions) (*hookd.Page[hookd.EventType], error) {
			return f.store.ListEventTypes(f.ctx, false, o)
		}, eventTypeName)
	}},
	{"MessagesNewestFirst", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		skipped := func(m *hookd.Message) { m.EventType = "skipped" }
		oldest := f.newMessage(app.ID, skipped) // older than every match
		var created []string
		for i := range pageItems {
			created = append(created, f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = at(i) }).ID)
			f.newMessage(other.ID)
			if i%2 == 0 {
				f.newMessage(app.ID, skipped)
			}
		}
		newest := f.newMessage(app.ID, skipped) // newer than every match
		list := func(o hookd.ListOptions) (*hookd.Page[hookd.Message], error) {
			return f.store.ListMessages(f.ctx, hookd.MessageFilter{AppID: app.ID, EventTypes: []string{"invoice.paid"}, ListOptions: o})
		}
		want := reversed(created)
		checkPaging(t, "messages", want, list, messageID)
		// Iterators of items the filter leaves out: nothing matching lies beyond them.
		page, err := list(hookd.ListOptions{Iterator: newest.ID})
		checkPage(t, "after the newest, filtered out", page, err, want, false, false, messageID)
		page, err = list(hookd.ListOptions{Iterator: oldest.ID, Backward: true})
		checkPage(t, "before the oldest, filtered out", page, err, want, false, false, messageID)
		page, err = list(hookd.ListOptions{Limit: 2, Iterator: oldest.ID, Backward: true})
		checkPage(t, "two before the oldest, filtered out", page, err, want[len(want)-2:], true, false, messageID)
	}},
	{"Deliveries", func(t *testing.T, f *fixture) {
		app := f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		var want []string
		for range pageItems {
			msg := f.newMessage(app.ID)
			want = append(want, f.newDelivery(msg, e1.ID).ID)
			f.newDelivery(msg, e2.ID)
		}
		checkPaging(t, "deliveries", want, func(o hookd.ListOptions) (*hookd.Page[hookd.Delivery], error) {
			return f.store.ListDeliveries(f.ctx, hookd.DeliveryFilter{EndpointID: e1.ID, ListOptions: o})
		}, deliveryID)
	}},
	{"AttemptsNewestFirst", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		d := f.newDelivery(f.newMessage(app.ID), ep.ID)
		var recs []hookd.AttemptRecord
		var created []string
		for i := range pageItems {
			a := attempt(d, i+1, at(i))
			created = append(created, a.ID)
			recs = append(recs, hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending})
		}
		f.record(recs...)
		checkPaging(t, "attempts", reversed(created), func(o hookd.ListOptions) (*hookd.Page[hookd.Attempt], error) {
			return f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, ListOptions: o})
		}, attemptID)
	}},
	{"OperationalEvents", func(t *testing.T, f *fixture) {
		var evs []hookd.OperationalEvent
		for i := range pageItems {
			evs = append(evs, hookd.OperationalEvent{ID: newID("evt_"), Type: hookd.OpEndpointDisabled, At: at(i)})
		}
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, evs) })
		checkPaging(t, "operational events", ids(evs, operationalEventID), func(o hookd.ListOptions) (*hookd.Page[hookd.OperationalEvent], error) {
			return f.store.ListOperationalEvents(f.ctx, o)
		}, operationalEventID)
	}},
	{"Empty", func(t *testing.T, f *fixture) {
		for _, o := range []hookd.ListOptions{{}, {Iterator: "app_x"}, {Limit: 1, Iterator: "app_x", Backward: true}} {
			page, err := f.store.ListApplications(f.ctx, o)
			checkPage(t, fmt.Sprintf("empty list %+v", o), page, err, []string{}, false, false, applicationID)
			mp, err := f.store.ListMessages(f.ctx, hookd.MessageFilter{AppID: "app_x", ListOptions: o})
			checkPage(t, fmt.Sprintf("no messages %+v", o), mp, err, []string{}, false, false, messageID)
		}
		var want []string
		for range 3 {
			want = append(want, f.newApp().ID)
		}
		// Past the end.
		page, err := f.store.ListApplications(f.ctx, hookd.ListOptions{Iterator: want[2]})
		checkPage(t, "after the last", page, err, []string{}, false, false, applicationID)
		// Before the first: nothing precedes it, everything follows; Iterator "" is the first page.
		page, err = f.store.ListApplications(f.ctx, hookd.ListOptions{Iterator: want[0], Backward: true})
		checkPage(t, "before the first", page, err, []string{}, false, true, applicationID)
		if page.Iterator != "" {
			t.Fatalf("before the first: Iterator %q, want \"\"", page.Iterator)
		}
	}},
	{"PartialPageBefore", func(t *testing.T, f *fixture) {
		var want []string
		for range pageItems {
			want = append(want, f.newApp().ID)
		}
		page, err := f.store.ListApplications(f.ctx, hookd.ListOptions{Limit: 5, Iterator: want[2], Backward: true})
		checkPage(t, "two items before the third", page, err, want[:2], false, true, applicationID)
		page, err = f.store.ListApplications(f.ctx, hookd.ListOptions{Limit: 5, Iterator: want[2]})
		checkPage(t, "after the third", page, err, want[3:], true, false, applicationID)
	}},
	{"IteratorBetweenIDs", func(t *testing.T, f *fixture) {
		var want []string
		for range 4 {
			want = append(want, f.newApp().ID)
		}
		between := want[1] + "!" // sorts after want[1], before want[2]
		page, err := f.store.ListApplications(f.ctx, hookd.ListOptions{Iterator: between})
		checkPage(t, "after a deleted id", page, err, want[2:], true, false, applicationID)
		page, err = f.store.ListApplications(f.ctx, hookd.ListOptions{Iterator: between, Backward: true})
		checkPage(t, "before a deleted id", page, err, want[:2], false, true, applicationID)
	}},
	{"BeforeAKeyAboveEveryID", func(t *testing.T, f *fixture) {
		// The server lists endpoints newest first as backward pages before "ep_~", a key that must
		// sort after every id in the store's collation.
		app := f.newApp()
		var want []string
		for range 5 {
			want = append(want, f.newEndpoint(app.ID).ID)
		}
		page, err := f.store.ListEndpoints(f.ctx, app.ID, hookd.ListOptions{Limit: 2, Iterator: "ep_~", Backward: true})
		checkPage(t, "the newest two", page, err, want[3:], true, false, endpointID)
		page, err = f.store.ListEndpoints(f.ctx, app.ID, hookd.ListOptions{Limit: 2, Iterator: page.PrevIterator, Backward: true})
		checkPage(t, "the two before", page, err, want[1:3], true, true, endpointID)
	}},
	{"Limits", func(t *testing.T, f *fixture) {
		var evs []hookd.OperationalEvent
		for i := range 260 {
			evs = append(evs, hookd.OperationalEvent{ID: newID("evt_"), Type: hookd.OpMessageAttemptFailing, At: at(i)})
		}
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, evs) })
		all := ids(evs, operationalEventID)
		list := func(o hookd.ListOptions) (*hookd.Page[hookd.OperationalEvent], error) {
			return f.store.ListOperationalEvents(f.ctx, o)
		}
		page, err := list(hookd.ListOptions{})
		checkPage(t, "limit 0 is 50", page, err, all[:50], false, true, operationalEventID)
		page, err = list(hookd.ListOptions{Limit: -3})
		checkPage(t, "a negative limit is 50", page, err, all[:50], false, true, operationalEventID)
		page, err = list(hookd.ListOptions{Limit: 1000})
		checkPage(t, "limit 1000 is 250", page, err, all[:250], false, true, operationalEventID)
		page, err = list(hookd.ListOptions{Limit: 1000, Iterator: page.Iterator})
		checkPage(t, "the rest", page, err, all[250:], true, false, operationalEventID)
		page, err = list(hookd.ListOptions{Limit: 1000, Iterator: all[259], Backward: true})
		checkPage(t, "250 before the last", page, err, all[9:259], true, true, operationalEventID)
	}},
}
