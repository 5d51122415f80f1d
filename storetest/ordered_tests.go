package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

// orderedDeliveryTests pin the reads and the write of ordered endpoints (hookd's ordered.go):
// the head, parking, and the parked deliveries.
var orderedDeliveryTests = []test{
	{"Ordered", func(t *testing.T, f *fixture) {
		// The flag round-trips on insert and update.
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Ordered = true })
		equal(t, "ordered", ep, *f.getEndpoint(ep.ID))
		ep.Ordered = false
		f.write(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &ep) })
		equal(t, "updated to unordered", ep, *f.getEndpoint(ep.ID))
	}},
	{"FirstPendingIsTheLowestID", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Ordered = true })
		other := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Ordered = true })
		_, err := f.store.FirstPendingDelivery(f.ctx, ep.ID)
		f.isErr(err, hookd.ErrNotFound)

		done := f.newDelivery(f.newMessage(app.ID), ep.ID, func(d *hookd.Delivery) {
			d.Status, d.NextAttemptAt = hookd.DeliveryDelivered, nil
		})
		_ = f.newDelivery(f.newMessage(app.ID), other.ID) // another endpoint's, before the head
		first := f.newDelivery(f.newMessage(app.ID), ep.ID)
		second := f.newDelivery(f.newMessage(app.ID), ep.ID)
		_ = done
		got, err := f.store.FirstPendingDelivery(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "head", first, *got)

		f.write(func(tx hookd.Tx) error {
			if err := tx.SetDeliveryStatus(f.ctx, first.ID, hookd.DeliveryFailed, nil, "HTTP 500", at(30)); err != nil {
				return err
			}
			got, err = tx.FirstPendingDelivery(f.ctx, ep.ID) // the transaction's own write counts
			return err
		})
		equal(t, "head after the first failed, in the transaction", second.ID, got.ID)
		f.write(func(tx hookd.Tx) error {
			got, err = tx.LockFirstPending(f.ctx, ep.ID)
			return err
		})
		equal(t, "head read by LockFirstPending", second, *got)
		f.write(func(tx hookd.Tx) error {
			_, err = tx.LockFirstPending(f.ctx, "ep_missing") // a deleted endpoint's: none
			return nil
		})
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"ParkAndListParked", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Ordered = true })
		head := f.newDelivery(f.newMessage(app.ID), ep.ID)
		a := f.newDelivery(f.newMessage(app.ID), ep.ID)
		b := f.newDelivery(f.newMessage(app.ID), ep.ID)
		c := f.newDelivery(f.newMessage(app.ID), ep.ID)
		park := func(d hookd.Delivery, endpointID string) bool {
			var parked bool
			f.write(func(tx hookd.Tx) error {
				var err error
				parked, err = tx.ParkDelivery(f.ctx, d.ID, endpointID, at(40))
				return err
			})
			return parked
		}
		if park(head, ep.ID) {
			t.Fatal("the head was parked: no earlier delivery is pending")
		}
		for _, d := range []hookd.Delivery{c, a, b} {
			if !park(d, ep.ID) {
				t.Fatalf("delivery %s not parked behind the head", d.ID)
			}
		}
		parkedA := a
		parkedA.NextAttemptAt, parkedA.UpdatedAt = nil, at(40)
		equal(t, "parked delivery", parkedA, *f.getDelivery(a.ID))

		ids := func(ds []hookd.Delivery) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			return out
		}
		got, err := f.store.ParkedDeliveries(f.ctx, ep.ID, "", 10)
		f.noErr(err)
		equal(t, "parked, in id order, head left out", []string{a.ID, b.ID, c.ID}, ids(got))
		got, err = f.store.ParkedDeliveries(f.ctx, ep.ID, "", 1)
		f.noErr(err)
		equal(t, "first page of one", []string{a.ID}, ids(got))
		got, err = f.store.ParkedDeliveries(f.ctx, ep.ID, a.ID, 10)
		f.noErr(err)
		equal(t, "after the first", []string{b.ID, c.ID}, ids(got))

		// A delivery given its next attempt time back, or ended, is parked no more.
		f.write(func(tx hookd.Tx) error {
			if err := tx.SetDeliveryStatus(f.ctx, b.ID, hookd.DeliveryPending, ptr(at(50)), "", at(50)); err != nil {
				return err
			}
			return tx.SetDeliveryStatus(f.ctx, c.ID, hookd.DeliveryCancelled, nil, "endpoint disabled", at(50))
		})
		got, err = f.store.ParkedDeliveries(f.ctx, ep.ID, "", 10)
		f.noErr(err)
		equal(t, "after one was queued and one cancelled", []string{a.ID}, ids(got))

		// Parking leaves an ended delivery as it is.
		if park(c, ep.ID) {
			t.Fatal("an ended delivery was reported parked")
		}
		if d := f.getDelivery(c.ID); d.Status != hookd.DeliveryCancelled || d.NextAttemptAt != nil {
			t.Fatalf("ended delivery after a park: %+v", d)
		}

		// Once the head ended, the next is not parked; on an endpoint that is not ordered, or is
		// gone, nothing is.
		f.write(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, head.ID, hookd.DeliveryDelivered, nil, "", at(60))
		})
		if park(a, ep.ID) {
			t.Fatal("parked the first pending delivery")
		}
		ep.Ordered = false
		f.write(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &ep) })
		if park(b, ep.ID) {
			t.Fatal("parked on an endpoint that is not ordered")
		}
		if park(b, "ep_missing") {
			t.Fatal("parked on a missing endpoint")
		}
		if d := f.getDelivery(b.ID); d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(at(50)) {
			t.Fatalf("delivery after refused parks: next attempt %v, want %v", d.NextAttemptAt, at(50))
		}
	}},
}
