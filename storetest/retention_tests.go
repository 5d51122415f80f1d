package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

// retentionTests pin payload expiry: PayloadExpiresAt reads back, ExpirePayloads deletes the
// payloads expired at its now in batches of at most limit, and an expunge clears the expiry.
var retentionTests = []test{
	{"ExpirePayloads", func(t *testing.T, f *fixture) {
		pe, ok := f.store.(hookd.PayloadExpirer)
		if !ok {
			t.Fatal("the store does not implement hookd.PayloadExpirer")
		}
		app := f.newApp()
		expiring := func(n int) func(*hookd.Message) {
			return func(m *hookd.Message) { m.PayloadExpiresAt = ptr(at(n)) }
		}
		e1 := f.newMessage(app.ID, expiring(10))
		e2 := f.newMessage(app.ID, expiring(20))
		e3 := f.newMessage(app.ID, expiring(20))
		later := f.newMessage(app.ID, expiring(100))
		kept := f.newMessage(app.ID)

		got, err := f.store.GetMessage(f.ctx, app.ID, later.ID)
		f.noErr(err)
		equal(t, "expiry read back", later, *got)

		n, err := pe.ExpirePayloads(f.ctx, at(5), 100)
		f.noErr(err)
		equal(t, "expired before any expiry", 0, n)
		// A batch of two, then the rest: at(20) is at the expiry, so expired.
		n, err = pe.ExpirePayloads(f.ctx, at(20), 2)
		f.noErr(err)
		equal(t, "first batch", 2, n)
		n, err = pe.ExpirePayloads(f.ctx, at(20), 2)
		f.noErr(err)
		equal(t, "second batch", 1, n)
		n, err = pe.ExpirePayloads(f.ctx, at(20), 2)
		f.noErr(err)
		equal(t, "nothing left", 0, n)
		for _, m := range []hookd.Message{e1, e2, e3} {
			got, err := f.store.GetMessage(f.ctx, app.ID, m.ID)
			f.noErr(err)
			m.Payload, m.PayloadExpiresAt = nil, nil
			equal(t, "expired message", m, *got)
		}
		for _, m := range []hookd.Message{later, kept} {
			got, err := f.store.GetMessage(f.ctx, app.ID, m.ID)
			f.noErr(err)
			equal(t, "unexpired message", m, *got)
		}
		f.write(func(tx hookd.Tx) error { return tx.ExpungeMessagePayload(f.ctx, later.ID) })
		got, err = f.store.GetMessage(f.ctx, app.ID, later.ID)
		f.noErr(err)
		later.Payload, later.PayloadExpiresAt = nil, nil
		equal(t, "expunged message", later, *got)
	}},
	{"Tags", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		m1 := f.newMessage(app.ID, func(m *hookd.Message) { m.Tags, m.Channels = []string{"x", "y/z#1"}, []string{"a"} })
		m2 := f.newMessage(app.ID, func(m *hookd.Message) { m.Tags = []string{"y/z#1"} })
		f.newMessage(app.ID)
		f.newMessage(other.ID, func(m *hookd.Message) { m.Tags = []string{"x"} })
		got, err := f.store.GetMessage(f.ctx, app.ID, m1.ID)
		f.noErr(err)
		equal(t, "tags read back", m1, *got)
		for _, c := range []struct {
			name   string
			filter hookd.MessageFilter
			want   []string
		}{
			{"tag", hookd.MessageFilter{Tag: "x"}, []string{m1.ID}},
			{"shared tag", hookd.MessageFilter{Tag: "y/z#1"}, []string{m2.ID, m1.ID}},
			{"unknown tag", hookd.MessageFilter{Tag: "none"}, []string{}},
			{"tag and channel", hookd.MessageFilter{Tag: "y/z#1", Channel: "a"}, []string{m1.ID}},
			{"tag and event type", hookd.MessageFilter{Tag: "x", EventTypes: []string{"other.type"}}, []string{}},
		} {
			c.filter.AppID = app.ID
			equal(t, c.name, c.want, f.listMessages(c.filter))
		}
		// Paging walks the tag's messages.
		page, err := f.store.ListMessages(f.ctx, hookd.MessageFilter{AppID: app.ID, Tag: "y/z#1", ListOptions: hookd.ListOptions{Limit: 1}})
		f.noErr(err)
		equal(t, "first page", []string{m2.ID}, ids(page.Data, messageID))
		page, err = f.store.ListMessages(f.ctx, hookd.MessageFilter{AppID: app.ID, Tag: "y/z#1", ListOptions: hookd.ListOptions{Limit: 1, Iterator: page.Iterator}})
		f.noErr(err)
		equal(t, "second page", []string{m1.ID}, ids(page.Data, messageID))
		equal(t, "done", true, page.Done)
	}},
}
