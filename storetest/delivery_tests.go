package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

var deliveryTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app := f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		ds := []hookd.Delivery{
			{ID: newID("dlv_"), MessageID: msg.ID, EndpointID: e1.ID, AppID: app.ID, Status: hookd.DeliveryPending,
				NextAttemptAt: ptr(at(3)), CreatedAt: at(2), UpdatedAt: at(2)},
			{ID: newID("dlv_"), MessageID: msg.ID, EndpointID: e2.ID, AppID: app.ID, Status: hookd.DeliveryFailed,
				Attempts: 10, LastError: "HTTP 500", CreatedAt: at(2), UpdatedAt: at(4)},
		}
		f.write(func(tx hookd.Tx) error { return tx.InsertDeliveries(f.ctx, ds) })
		f.write(func(tx hookd.Tx) error { return tx.InsertDeliveries(f.ctx, nil) })
		for _, d := range ds {
			equal(t, "by id", d, *f.getDelivery(d.ID))
			got, err := f.store.GetDeliveryFor(f.ctx, d.MessageID, d.EndpointID)
			f.noErr(err)
			equal(t, "by message and endpoint", d, *got)
		}
		_, err := f.store.GetDelivery(f.ctx, "dlv_missing")
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetDeliveryFor(f.ctx, msg.ID, "ep_missing")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"InsertErrors", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		f.newDelivery(msg, ep.ID)
		err := f.writeErr(func(tx hookd.Tx) error {
			return tx.InsertDeliveries(f.ctx, []hookd.Delivery{{ID: newID("dlv_"), MessageID: msg.ID, EndpointID: ep.ID,
				AppID: app.ID, Status: hookd.DeliveryPending, CreatedAt: at(0), UpdatedAt: at(0)}})
		})
		f.isErr(err, hookd.ErrConflict)
		err = f.writeErr(func(tx hookd.Tx) error {
			return tx.InsertDeliveries(f.ctx, []hookd.Delivery{{ID: newID("dlv_"), MessageID: "msg_missing", EndpointID: ep.ID,
				AppID: app.ID, Status: hookd.DeliveryPending, CreatedAt: at(0), UpdatedAt: at(0)}})
		})
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"SetStatus", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d := f.newDelivery(msg, ep.ID, func(d *hookd.Delivery) { d.Attempts, d.LastError = 3, "HTTP 500" })
		f.write(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, d.ID, hookd.DeliveryCancelled, nil, "endpoint disabled", at(40))
		})
		want := d
		want.Status, want.NextAttemptAt, want.LastError, want.UpdatedAt = hookd.DeliveryCancelled, nil, "endpoint disabled", at(40)
		equal(t, "cancelled", want, *f.getDelivery(d.ID))
		f.write(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, d.ID, hookd.DeliveryPending, ptr(at(60)), "", at(50))
		})
		want.Status, want.NextAttemptAt, want.LastError, want.UpdatedAt = hookd.DeliveryPending, ptr(at(60)), "", at(50)
		equal(t, "recovered", want, *f.getDelivery(d.ID))
		err := f.writeErr(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, "dlv_missing", hookd.DeliveryCancelled, nil, "", at(0))
		})
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"LoadWork", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID, func(m *hookd.Message) {
			m.EventID, m.Channels, m.Payload = "evt:1", []string{"a"}, []byte(`{"x": "y" }`)
		})
		d := f.newDelivery(msg, ep.ID)
		gotD, gotM, err := f.store.LoadWork(f.ctx, d.ID)
		f.noErr(err)
		equal(t, "delivery", d, *gotD)
		equal(t, "message", msg, *gotM)
		f.write(func(tx hookd.Tx) error {
			gotD, gotM, err := tx.LoadWork(f.ctx, d.ID)
			f.noErr(err)
			equal(t, "delivery in a transaction", d, *gotD)
			equal(t, "message in a transaction", msg, *gotM)
			return nil
		})
		_, _, err = f.store.LoadWork(f.ctx, "dlv_missing")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"LoadWorkBatch", func(t *testing.T, f *fixture) {
		bl, ok := f.store.(hookd.WorkBatchLoader)
		if !ok {
			t.Skip("the store is not a hookd.WorkBatchLoader")
		}
		app := f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		m1 := f.newMessage(app.ID, func(m *hookd.Message) { m.Payload = []byte(`{"n": 1}`) })
		m2 := f.newMessage(app.ID, func(m *hookd.Message) { m.Channels = []string{"b"} })
		d11, d12, d21 := f.newDelivery(m1, e1.ID), f.newDelivery(m1, e2.ID), f.newDelivery(m2, e1.ID)
		got, err := bl.LoadWorkBatch(f.ctx, []string{d11.ID, d21.ID, "dlv_missing", d12.ID})
		f.noErr(err)
		if len(got) != 3 {
			t.Fatalf("LoadWorkBatch returned %d deliveries, want 3 (the missing one left out)", len(got))
		}
		for _, want := range []struct {
			d hookd.Delivery
			m hookd.Message
		}{{d11, m1}, {d12, m1}, {d21, m2}} {
			w, ok := got[want.d.ID]
			if !ok {
				t.Fatalf("delivery %s missing", want.d.ID)
			}
			equal(t, "delivery", want.d, *w.Delivery)
			equal(t, "message", want.m, *w.Message)
		}
		got, err = bl.LoadWorkBatch(f.ctx, nil)
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("LoadWorkBatch of no ids returned %d", len(got))
		}
	}},
	{"Filters", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		e1, e2 := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		eo := f.newEndpoint(other.ID)
		m1 := f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = at(10) })
		m2 := f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = at(20) })
		mo := f.newMessage(other.ID, func(m *hookd.Message) { m.CreatedAt = at(15) })
		d11 := f.newDelivery(m1, e1.ID)
		d12 := f.newDelivery(m1, e2.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryDelivered })
		do := f.newDelivery(mo, eo.ID)
		d21 := f.newDelivery(m2, e1.ID, func(d *hookd.Delivery) { d.Status = hookd.DeliveryFailed })
		d22 := f.newDelivery(m2, e2.ID)
		cases := []struct {
			name   string
			filter hookd.DeliveryFilter
			want   []hookd.Delivery
		}{
			{"everything", hookd.DeliveryFilter{}, []hookd.Delivery{d11, d12, do, d21, d22}},
			{"application", hookd.DeliveryFilter{AppID: app.ID}, []hookd.Delivery{d11, d12, d21, d22}},
			{"message", hookd.DeliveryFilter{MessageID: m1.ID}, []hookd.Delivery{d11, d12}},
			{"endpoint", hookd.DeliveryFilter{EndpointID: e1.ID}, []hookd.Delivery{d11, d21}},
			{"status", hookd.DeliveryFilter{AppID: app.ID, Status: hookd.DeliveryPending}, []hookd.Delivery{d11, d22}},
			{"endpoint and status", hookd.DeliveryFilter{EndpointID: e2.ID, Status: hookd.DeliveryPending}, []hookd.Delivery{d22}},
			{"after, inclusive", hookd.DeliveryFilter{After: ptr(at(15))}, []hookd.Delivery{do, d21, d22}},
			{"before, exclusive", hookd.DeliveryFilter{Before: ptr(at(15))}, []hookd.Delivery{d11, d12}},
			{"all at once", hookd.DeliveryFilter{AppID: app.ID, MessageID: m2.ID, EndpointID: e1.ID,
				Status: hookd.DeliveryFailed, After: ptr(at(20)), Before: ptr(at(21))}, []hookd.Delivery{d21}},
			{"nothing", hookd.DeliveryFilter{EndpointID: e1.ID, Status: hookd.DeliveryCancelled}, []hookd.Delivery{}},
		}
		for _, c := range cases {
			page, err := f.store.ListDeliveries(f.ctx, c.filter)
			f.noErr(err)
			if len(c.want) == 0 {
				if len(page.Data) != 0 {
					t.Fatalf("%s: want no deliveries, got %d", c.name, len(page.Data))
				}
				continue
			}
			equal(t, c.name, c.want, page.Data)
		}
	}},
}
