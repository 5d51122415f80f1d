package storetest

import (
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// retentionTests pin payload expiry: PayloadExpiresAt reads back, ExpirePayloads deletes the
// payloads expired at its now in batches of at most limit, and an expunge clears the expiry. They
// pin message retention too: DeleteOldMessages deletes the messages created before its time,
// oldest first and at most limit at once, with their deliveries, attempts and tags, and keeps a
// message with a pending delivery.
var retentionTests = []test{
	{"DeleteOldMessages", func(t *testing.T, f *fixture) {
		mr, ok := f.store.(hookd.MessageRetainer)
		if !ok {
			t.Fatal("the store does not implement hookd.MessageRetainer")
		}
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		created := func(n int) func(*hookd.Message) {
			return func(m *hookd.Message) { m.CreatedAt, m.Tags, m.Channels = at(n), []string{"old"}, []string{"c"} }
		}
		delivered := func(m hookd.Message) (hookd.Delivery, hookd.Attempt) {
			d := f.newDelivery(m, ep.ID)
			a := attempt(d, 1, m.CreatedAt.Add(time.Second), succeeded)
			f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryDelivered})
			return d, a
		}
		old1 := f.newMessage(app.ID, created(10))
		d1, a1 := delivered(old1)
		old2 := f.newMessage(app.ID, created(20))
		pending := f.newMessage(app.ID, created(5))
		dp := f.newDelivery(pending, ep.ID)
		young := f.newMessage(app.ID, created(100))
		dy, _ := delivered(young)

		n, err := mr.DeleteOldMessages(f.ctx, at(5), 10)
		f.noErr(err)
		equal(t, "nothing created before", hookd.RetentionCount{}, n)
		n, err = mr.DeleteOldMessages(f.ctx, at(50), 1)
		f.noErr(err)
		equal(t, "first batch: the oldest without a pending delivery", hookd.RetentionCount{Messages: 1, Deliveries: 1, Attempts: 1}, n)
		_, err = f.store.GetMessage(f.ctx, app.ID, old1.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetDelivery(f.ctx, d1.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetAttempt(f.ctx, a1.ID)
		f.isErr(err, hookd.ErrNotFound)
		n, err = mr.DeleteOldMessages(f.ctx, at(50), 1)
		f.noErr(err)
		equal(t, "second batch", hookd.RetentionCount{Messages: 1}, n)
		n, err = mr.DeleteOldMessages(f.ctx, at(50), 1)
		f.noErr(err)
		equal(t, "nothing left", hookd.RetentionCount{}, n)

		for _, m := range []hookd.Message{pending, young} {
			got, err := f.store.GetMessage(f.ctx, app.ID, m.ID)
			f.noErr(err)
			equal(t, "kept message", m, *got)
		}
		equal(t, "kept pending delivery", hookd.DeliveryPending, f.getDelivery(dp.ID).Status)
		equal(t, "kept delivered delivery", hookd.DeliveryDelivered, f.getDelivery(dy.ID).Status)
		equal(t, "tag rows of the deleted", []string{young.ID, pending.ID}, f.listMessages(hookd.MessageFilter{AppID: app.ID, Tag: "old"}))
		equal(t, "channel rows of the deleted", []string{young.ID, pending.ID}, f.listMessages(hookd.MessageFilter{AppID: app.ID, Channel: "c"}))
		_, err = f.store.GetMessage(f.ctx, app.ID, old2.ID)
		f.isErr(err, hookd.ErrNotFound)
	}},
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
