package storetest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/hookd/hookd"
)

func (f *fixture) listMessages(filter hookd.MessageFilter) []string {
	f.t.Helper()
	page, err := f.store.ListMessages(f.ctx, filter)
	f.noErr(err)
	return ids(page.Data, messageID)
}

var messageTests = []test{
	{"GetMessagesByID", func(t *testing.T, f *fixture) {
		br, ok := f.store.(hookd.MessageBatchReader)
		if !ok {
			t.Skip("the store is not a hookd.MessageBatchReader")
		}
		app, other := f.newApp(), f.newApp()
		m1 := f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = "evt_batch" })
		m2 := f.newMessage(app.ID)
		mo := f.newMessage(other.ID)
		got, err := br.GetMessagesByID(f.ctx, app.ID, []string{m1.ID, m2.ID, mo.ID, "msg_missing", "evt_batch"})
		f.noErr(err)
		equal(t, "messages", map[string]hookd.Message{m1.ID: m1, m2.ID: m2}, got)
		got, err = br.GetMessagesByID(f.ctx, app.ID, nil)
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("no id asked for, yet read: %+v", got)
		}
		// More ids than SQLite takes parameters in one statement (32,766).
		got, err = br.GetMessagesByID(f.ctx, app.ID, append(manyIDs("msg_", 40_000), m2.ID))
		f.noErr(err)
		equal(t, "messages of 40,001 ids", map[string]hookd.Message{m2.ID: m2}, got)
	}},
	{"DeliveryCountsByMessage", func(t *testing.T, f *fixture) {
		dc, ok := f.store.(hookd.DeliveryCounter)
		if !ok {
			t.Skip("the store is not a hookd.DeliveryCounter")
		}
		app, other := f.newApp(), f.newApp()
		e1, e2, e3 := f.newEndpoint(app.ID), f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		eo := f.newEndpoint(other.ID)
		m1, m2, bare := f.newMessage(app.ID), f.newMessage(app.ID), f.newMessage(app.ID)
		mo := f.newMessage(other.ID)
		f.newDelivery(m1, e1.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryDelivered })
		f.newDelivery(m1, e2.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryDelivered })
		f.newDelivery(m1, e3.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryFailed })
		f.newDelivery(m2, e1.ID)
		f.newDelivery(m2, e2.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryCancelled })
		f.newDelivery(mo, eo.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryFailed })
		got, err := dc.DeliveryCountsByMessage(f.ctx, app.ID, []string{m1.ID, m2.ID, bare.ID, mo.ID, "msg_missing"})
		f.noErr(err)
		equal(t, "counts", map[string]hookd.DeliveryCounts{
			m1.ID: {Delivered: 2, Failed: 1},
			m2.ID: {Pending: 1, Cancelled: 1},
		}, got)
		got, err = dc.DeliveryCountsByMessage(f.ctx, app.ID, nil)
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("no id asked for, yet counted: %+v", got)
		}
		got, err = dc.DeliveryCountsByMessage(f.ctx, app.ID, append(manyIDs("msg_", 40_000), m2.ID))
		f.noErr(err)
		equal(t, "counts of 40,001 ids", map[string]hookd.DeliveryCounts{m2.ID: {Pending: 1, Cancelled: 1}}, got)
	}},
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		full := f.newMessage(app.ID, func(m *hookd.Message) {
			m.EventID = "order:1001"
			m.EventType = "invoice.paid"
			m.Channels = []string{"project:1", "eu"}
			// Kept byte for byte: receivers check a signature over these bytes.
			m.Payload = json.RawMessage("{ \"b\": 1,\n  \"a\": \"ü ✓\\u00e9\", \"n\": 1.50, \"z\": [ ] }")
		})
		bare := f.newMessage(app.ID, func(m *hookd.Message) { m.Channels = []string{} })
		twice := f.newMessage(app.ID, func(m *hookd.Message) { m.Channels = []string{"x", "x"} })
		got, err := f.store.GetMessage(f.ctx, app.ID, twice.ID)
		f.noErr(err)
		equal(t, "a channel named twice", twice, *got)
		got, err = f.store.GetMessage(f.ctx, app.ID, full.ID)
		f.noErr(err)
		equal(t, "by id", full, *got)
		got, err = f.store.GetMessage(f.ctx, app.ID, "order:1001")
		f.noErr(err)
		equal(t, "by event id", full, *got)
		got, err = f.store.GetMessage(f.ctx, app.ID, bare.ID)
		f.noErr(err)
		bare.Channels = nil
		equal(t, "bare", bare, *got)
		_, err = f.store.GetMessage(f.ctx, other.ID, full.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetMessage(f.ctx, other.ID, "order:1001")
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetMessage(f.ctx, app.ID, "")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"PrintableEventIDs", func(t *testing.T, f *fixture) {
		app := f.newApp()
		for _, id := range printableUIDs {
			msg := f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = id })
			got, err := f.store.GetMessage(f.ctx, app.ID, id)
			f.noErr(err)
			equal(t, "event id "+id, msg, *got)
		}
	}},
	{"IDBeforeEventID", func(t *testing.T, f *fixture) {
		app := f.newApp()
		older := f.newMessage(app.ID)
		f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = older.ID })
		eventIDOwner := f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = newID("msg_") })
		idOwner := f.newMessage(app.ID, func(m *hookd.Message) { m.ID = eventIDOwner.EventID })
		for _, want := range []hookd.Message{older, idOwner} {
			got, err := f.store.GetMessage(f.ctx, app.ID, want.ID)
			f.noErr(err)
			equal(t, "an id that is also another message's event id", want, *got)
		}
	}},
	{"InsertErrors", func(t *testing.T, f *fixture) {
		app := f.newApp()
		msg := f.newMessage(app.ID)
		err := f.writeErr(func(tx hookd.Tx) error {
			m := hookd.Message{ID: newID("msg_"), AppID: "app_missing", EventType: "x", Payload: []byte(`{}`), CreatedAt: at(0)}
			_, _, err := tx.InsertMessage(f.ctx, &m)
			return err
		})
		f.isErr(err, hookd.ErrNotFound)
		err = f.writeErr(func(tx hookd.Tx) error {
			m := msg
			_, _, err := tx.InsertMessage(f.ctx, &m)
			return err
		})
		f.isErr(err, hookd.ErrConflict)
	}},
	{"IdempotentSequential", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		first := f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = "order:1001" })
		f.write(func(tx hookd.Tx) error {
			dup := hookd.Message{ID: newID("msg_"), AppID: app.ID, EventID: "order:1001", EventType: "other",
				Payload: []byte(`{"dup":true}`), CreatedAt: at(9)}
			existing, inserted, err := tx.InsertMessage(f.ctx, &dup)
			f.noErr(err)
			if inserted || existing == nil {
				t.Fatalf("duplicate event id: inserted %t, existing %v", inserted, existing)
			}
			equal(t, "existing", first, *existing)
			return nil
		})
		equal(t, "messages", []string{first.ID}, f.listMessages(hookd.MessageFilter{AppID: app.ID}))
		// The same event id in another application is another message.
		f.newMessage(other.ID, func(m *hookd.Message) { m.EventID = "order:1001" })
		// Messages without an event id never collide.
		f.write(func(tx hookd.Tx) error {
			m := hookd.Message{ID: newID("msg_"), AppID: app.ID, EventType: "x", Payload: []byte(`{}`), CreatedAt: at(3)}
			existing, inserted, err := tx.InsertMessage(f.ctx, &m)
			if err == nil && (!inserted || existing != nil) {
				t.Fatalf("insert: inserted %t, existing %v; want true, nil", inserted, existing)
			}
			return err
		})
		f.newMessage(app.ID)
		if n := len(f.listMessages(hookd.MessageFilter{AppID: app.ID})); n != 3 {
			t.Fatalf("want 3 messages, got %d", n)
		}
	}},
	{"IdempotentConcurrent", func(t *testing.T, f *fixture) {
		app := f.newApp()
		type result struct {
			id       string
			existing *hookd.Message
			inserted bool
			err      error
		}
		results := make([]result, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				msg := hookd.Message{ID: newID("msg_"), AppID: app.ID, EventID: "order:1001", EventType: "invoice.paid",
					Payload: []byte(`{"i":1}`), CreatedAt: at(i)}
				r := result{id: msg.ID}
				<-start
				r.err = f.store.InTx(f.ctx, func(tx hookd.Tx) error {
					var err error
					r.existing, r.inserted, err = tx.InsertMessage(f.ctx, &msg)
					return err
				})
				results[i] = r
			})
		}
		close(start)
		wg.Wait()
		var winner, loser result
		for _, r := range results {
			f.noErr(r.err)
			if r.inserted {
				winner = r
			} else {
				loser = r
			}
		}
		if winner.id == "" || loser.id == "" {
			t.Fatalf("want one insert and one duplicate, got %+v", results)
		}
		if loser.existing == nil || loser.existing.ID != winner.id {
			t.Fatalf("the duplicate returned %v, want the message %s", loser.existing, winner.id)
		}
		equal(t, "messages", []string{winner.id}, f.listMessages(hookd.MessageFilter{AppID: app.ID}))
	}},
	{"ExpungePayload", func(t *testing.T, f *fixture) {
		app := f.newApp()
		msg := f.newMessage(app.ID)
		keep := f.newMessage(app.ID)
		f.write(func(tx hookd.Tx) error { return tx.ExpungeMessagePayload(f.ctx, msg.ID) })
		got, err := f.store.GetMessage(f.ctx, app.ID, msg.ID)
		f.noErr(err)
		msg.Payload = nil
		equal(t, "expunged", msg, *got)
		got, err = f.store.GetMessage(f.ctx, app.ID, keep.ID)
		f.noErr(err)
		equal(t, "other message", keep, *got)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.ExpungeMessagePayload(f.ctx, "msg_missing") }), hookd.ErrNotFound)
	}},
	{"Filters", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		m1 := f.newMessage(app.ID, func(m *hookd.Message) {
			m.EventType, m.Channels, m.CreatedAt = "invoice.paid", []string{"a", "b:c"}, at(10)
		})
		m2 := f.newMessage(app.ID, func(m *hookd.Message) {
			m.EventType, m.Channels, m.CreatedAt = "invoice.voided", []string{"b:c"}, at(20)
		})
		m3 := f.newMessage(app.ID, func(m *hookd.Message) {
			m.EventType, m.Channels, m.CreatedAt = "user.created", []string{"d", "d"}, at(30)
		})
		f.newMessage(other.ID, func(m *hookd.Message) {
			m.EventType, m.Channels, m.CreatedAt = "invoice.paid", []string{"a"}, at(20)
		})
		cases := []struct {
			name   string
			filter hookd.MessageFilter
			want   []string
		}{
			{"application", hookd.MessageFilter{}, []string{m3.ID, m2.ID, m1.ID}},
			{"one event type", hookd.MessageFilter{EventTypes: []string{"invoice.paid"}}, []string{m1.ID}},
			{"event types", hookd.MessageFilter{EventTypes: []string{"user.created", "invoice.paid", "none"}}, []string{m3.ID, m1.ID}},
			{"unknown event type", hookd.MessageFilter{EventTypes: []string{"none"}}, []string{}},
			{"channel", hookd.MessageFilter{Channel: "a"}, []string{m1.ID}},
			{"shared channel", hookd.MessageFilter{Channel: "b:c"}, []string{m2.ID, m1.ID}},
			{"channel prefix is not a channel", hookd.MessageFilter{Channel: "b"}, []string{}},
			{"channel named twice", hookd.MessageFilter{Channel: "d"}, []string{m3.ID}},
			{"event type given twice", hookd.MessageFilter{EventTypes: []string{"user.created", "user.created"}}, []string{m3.ID}},
			{"channel and event types", hookd.MessageFilter{Channel: "b:c", EventTypes: []string{"invoice.voided", "user.created"}}, []string{m2.ID}},
			{"after, inclusive", hookd.MessageFilter{After: ptr(at(20))}, []string{m3.ID, m2.ID}},
			{"before, exclusive", hookd.MessageFilter{Before: ptr(at(20))}, []string{m1.ID}},
			{"window", hookd.MessageFilter{After: ptr(at(11)), Before: ptr(at(30))}, []string{m2.ID}},
			{"all at once", hookd.MessageFilter{EventTypes: []string{"invoice.paid", "invoice.voided"}, Channel: "b:c",
				After: ptr(at(15)), Before: ptr(at(25))}, []string{m2.ID}},
			// More than SQLite's compound SELECT takes (500) and than it takes parameters (32,766).
			{"40,000 event types", hookd.MessageFilter{EventTypes: append(manyIDs("type.", 40_000), "invoice.voided", "user.created")},
				[]string{m3.ID, m2.ID}},
			{"40,000 event types and a channel", hookd.MessageFilter{Channel: "b:c", EventTypes: append(manyIDs("type.", 40_000), "invoice.paid")},
				[]string{m1.ID}},
		}
		for _, c := range cases {
			c.filter.AppID = app.ID
			equal(t, c.name, c.want, f.listMessages(c.filter))
		}
	}},
}
