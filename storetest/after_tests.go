package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

// afterTests pin the first page of a newest-first list filtered from a time on with FromAfter
// (After, no Before, no iterator): the oldest items from that time, in list order, as Svix's
// server pages them.
var afterTests = []test{
	{"Messages", func(t *testing.T, f *fixture) {
		app := f.newApp()
		var ms []hookd.Message
		for i := range 6 {
			ms = append(ms, f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = at(10 * (i + 1)) }))
		}
		filter := hookd.MessageFilter{AppID: app.ID, After: ptr(at(20)), FromAfter: true, ListOptions: hookd.ListOptions{Limit: 2}}
		page, err := f.store.ListMessages(f.ctx, filter)
		f.noErr(err)
		equal(t, "the page after the time", []string{ms[2].ID, ms[1].ID}, ids(page.Data, messageID))
		equal(t, "prev iterator", ms[2].ID, page.PrevIterator)
		equal(t, "iterator", ms[1].ID, page.Iterator)
		equal(t, "done", false, page.Done)
		// The page before it in list order, the next in time, follows on.
		filter.ListOptions = hookd.ListOptions{Limit: 2, Iterator: page.PrevIterator, Backward: true}
		page, err = f.store.ListMessages(f.ctx, filter)
		f.noErr(err)
		equal(t, "the next page in time", []string{ms[4].ID, ms[3].ID}, ids(page.Data, messageID))
		// Everything after the time fits: one page, done.
		filter.ListOptions = hookd.ListOptions{Limit: 10}
		page, err = f.store.ListMessages(f.ctx, filter)
		f.noErr(err)
		equal(t, "all after the time", []string{ms[5].ID, ms[4].ID, ms[3].ID, ms[2].ID, ms[1].ID}, ids(page.Data, messageID))
		equal(t, "done when all fit", true, page.Done)
		// Without FromAfter, the newest from the time.
		filter = hookd.MessageFilter{AppID: app.ID, After: ptr(at(20)), ListOptions: hookd.ListOptions{Limit: 2}}
		equal(t, "newest after the time", []string{ms[5].ID, ms[4].ID}, f.listMessages(filter))
		// With before too, the window is listed newest first, as Svix lists it.
		filter = hookd.MessageFilter{AppID: app.ID, After: ptr(at(20)), Before: ptr(at(60)), FromAfter: true, ListOptions: hookd.ListOptions{Limit: 1}}
		equal(t, "window", []string{ms[4].ID}, f.listMessages(filter))
	}},
	{"Attempts", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		d := f.newDelivery(f.newMessage(app.ID), ep.ID)
		var as []hookd.Attempt
		for i := range 5 {
			a := attempt(d, i+1, at(10*(i+1)))
			as = append(as, a)
			f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending})
		}
		filter := hookd.AttemptFilter{AppID: app.ID, EndpointID: ep.ID, After: ptr(at(20)), FromAfter: true, ListOptions: hookd.ListOptions{Limit: 2}}
		page, err := f.store.ListAttempts(f.ctx, filter)
		f.noErr(err)
		equal(t, "the page after the time", []string{as[2].ID, as[1].ID}, ids(page.Data, attemptID))
		equal(t, "done", false, page.Done)
		filter.ListOptions = hookd.ListOptions{Limit: 2, Iterator: page.PrevIterator, Backward: true}
		page, err = f.store.ListAttempts(f.ctx, filter)
		f.noErr(err)
		equal(t, "the next page in time", []string{as[4].ID, as[3].ID}, ids(page.Data, attemptID))
	}},
}
