package storetest

import (
	"testing"
	"time"

	"github.com/hookd/hookd"
)

var pendingSummaryTests = []test{
	{"Empty", func(t *testing.T, f *fixture) {
		got, err := f.store.PendingSummary(f.ctx)
		f.noErr(err)
		if len(got) != 0 {
			t.Fatalf("empty store: got %+v, want none", got)
		}
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		f.newDelivery(f.newMessage(app.ID), ep.ID, func(d *hookd.Delivery) { d.Status, d.NextAttemptAt = hookd.DeliveryDelivered, nil })
		got, err = f.store.PendingSummary(f.ctx)
		f.noErr(err)
		if len(got) != 0 {
			t.Fatalf("nothing pending: got %+v, want none", got)
		}
	}},
	{"CountsAndOldest", func(t *testing.T, f *fixture) {
		app1, app2 := f.newApp(), f.newApp()
		e1, idle, e3 := f.newEndpoint(app1.ID), f.newEndpoint(app1.ID), f.newEndpoint(app2.ID)
		gone := f.newEndpoint(app2.ID)
		deliver := func(app hookd.Application, ep string, status hookd.DeliveryStatus, created time.Time) hookd.Delivery {
			msg := f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = created })
			return f.newDelivery(msg, ep, func(d *hookd.Delivery) {
				d.Status = status
				if status != hookd.DeliveryPending {
					d.NextAttemptAt = nil
				}
			})
		}
		// e1's oldest pending delivery is not its first by id: Oldest is by creation time.
		deliver(app1, e1.ID, hookd.DeliveryPending, at(50))
		deliver(app1, e1.ID, hookd.DeliveryPending, at(30))
		later := deliver(app1, e1.ID, hookd.DeliveryPending, at(70))
		deliver(app1, e1.ID, hookd.DeliveryDelivered, at(10))
		deliver(app1, e1.ID, hookd.DeliveryFailed, at(11))
		deliver(app1, e1.ID, hookd.DeliveryCancelled, at(12))
		deliver(app1, idle.ID, hookd.DeliveryDelivered, at(5))
		deliver(app2, e3.ID, hookd.DeliveryPending, at(40))
		deliver(app2, gone.ID, hookd.DeliveryPending, at(60))
		// A deleted endpoint's deliveries stay, pending until the worker cancels them.
		f.write(func(tx hookd.Tx) error { return tx.DeleteEndpoint(f.ctx, gone.ID) })

		got, err := f.store.PendingSummary(f.ctx)
		f.noErr(err)
		want := []hookd.PendingEndpoint{
			{EndpointID: e1.ID, AppID: app1.ID, Pending: 3, Oldest: at(30)},
			{EndpointID: e3.ID, AppID: app2.ID, Pending: 1, Oldest: at(40)},
			{EndpointID: gone.ID, AppID: app2.ID, Pending: 1, Oldest: at(60)},
		}
		equal(t, "summary", want, got)

		f.write(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, later.ID, hookd.DeliveryDelivered, nil, "", at(80))
		})
		var inTx []hookd.PendingEndpoint
		f.write(func(tx hookd.Tx) error {
			inTx, err = tx.PendingSummary(f.ctx)
			return err
		})
		want[0].Pending = 2
		equal(t, "summary in a transaction, after a delivery", want, inTx)
	}},
}

var dueDeliveryTests = []test{
	{"DueInIDOrderAndPaged", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		pending := func(created time.Time, next *time.Time) hookd.Delivery {
			return f.newDelivery(f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = created }), ep.ID,
				func(d *hookd.Delivery) { d.NextAttemptAt = next })
		}
		first := pending(at(10), nil)         // a first attempt: due at its creation
		retry := pending(at(5), ptr(at(40)))  // a retry due at 40
		later := pending(at(20), ptr(at(90))) // due after the bound
		fresh := pending(at(70), nil)         // created after the bound
		_ = f.newDelivery(f.newMessage(app.ID), ep.ID, func(d *hookd.Delivery) {
			d.Status, d.NextAttemptAt, d.CreatedAt = hookd.DeliveryDelivered, nil, at(1)
		})
		_ = f.newDelivery(f.newMessage(app.ID), ep.ID, func(d *hookd.Delivery) {
			d.Status, d.NextAttemptAt, d.CreatedAt = hookd.DeliveryFailed, nil, at(1)
		})
		_, _ = later, fresh

		got, err := f.store.DueDeliveries(f.ctx, at(50), "", 10)
		f.noErr(err)
		ids := func(ds []hookd.Delivery) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			return out
		}
		equal(t, "due at 50", ids([]hookd.Delivery{first, retry}), ids(got))
		if len(got) == 2 {
			equal(t, "the first due delivery", first, got[0])
		}

		page, err := f.store.DueDeliveries(f.ctx, at(100), "", 1)
		f.noErr(err)
		equal(t, "first page of one", ids([]hookd.Delivery{first}), ids(page))
		page, err = f.store.DueDeliveries(f.ctx, at(100), first.ID, 10)
		f.noErr(err)
		equal(t, "after the first", ids([]hookd.Delivery{retry, later, fresh}), ids(page))

		f.write(func(tx hookd.Tx) error {
			return tx.SetDeliveryStatus(f.ctx, retry.ID, hookd.DeliveryDelivered, nil, "", at(60))
		})
		got, err = f.store.DueDeliveries(f.ctx, at(50), "", 10)
		f.noErr(err)
		equal(t, "after the retry was delivered", ids([]hookd.Delivery{first}), ids(got))
	}},
}
