package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

// listBoundTests pin the filters a client adds to a list for its indexes' sake: the id bounds it
// derives from the times (MessageFilter.FromID and BeforeID, DeliveryFilter.FromID,
// AttemptFilter.FromID), which a store applies as well as the times, and an endpoint's lists,
// which hold nothing when the endpoint is of another application.
var listBoundTests = []test{
	{"IDBounds", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		var ms []hookd.Message
		var ds []hookd.Delivery
		var as []hookd.Attempt
		for i := range 4 {
			m := f.newMessage(app.ID, func(m *hookd.Message) { m.CreatedAt = at(10 * (i + 1)) })
			ms = append(ms, m)
			d := f.newDelivery(m, ep.ID)
			ds = append(ds, d)
			a := attempt(d, 1, at(10*(i+1)))
			as = append(as, a)
			f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryFailed})
		}
		// The ids bound the list as well as the times: here tighter than them.
		equal(t, "messages from an id", []string{ms[3].ID, ms[2].ID},
			f.listMessages(hookd.MessageFilter{AppID: app.ID, After: ptr(at(0)), FromID: ms[2].ID}))
		equal(t, "messages before an id", []string{ms[1].ID, ms[0].ID},
			f.listMessages(hookd.MessageFilter{AppID: app.ID, Before: ptr(at(100)), BeforeID: ms[2].ID}))
		equal(t, "messages in both", []string{ms[1].ID},
			f.listMessages(hookd.MessageFilter{AppID: app.ID, After: ptr(at(20)), FromID: ms[0].ID, Before: ptr(at(100)), BeforeID: ms[2].ID}))
		dp, err := f.store.ListDeliveries(f.ctx, hookd.DeliveryFilter{AppID: app.ID, Status: hookd.DeliveryFailed, FromID: ds[1].ID})
		f.noErr(err)
		equal(t, "deliveries from an id", []string{ds[1].ID, ds[2].ID, ds[3].ID}, ids(dp.Data, deliveryID))
		ap, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, EndpointID: ep.ID, After: ptr(at(0)), FromID: as[3].ID})
		f.noErr(err)
		equal(t, "attempts from an id", []string{as[3].ID}, ids(ap.Data, attemptID))
	}},
	{"EndpointOfAnotherApplication", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		ep := f.newEndpoint(app.ID)
		d := f.newDelivery(f.newMessage(app.ID, func(m *hookd.Message) { m.EventType = "user.created" }), ep.ID)
		a := attempt(d, 1, at(10))
		f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryFailed})
		for _, appID := range []string{app.ID, other.ID} {
			want := map[bool][]string{true: {a.ID}, false: {}}[appID == app.ID]
			for _, filter := range []hookd.AttemptFilter{
				{AppID: appID, EndpointID: ep.ID},
				{AppID: appID, EndpointID: ep.ID, Success: ptr(false)},
				{AppID: appID, EndpointID: ep.ID, EventTypes: []string{"user.created", "none"}},
			} {
				p, err := f.store.ListAttempts(f.ctx, filter)
				f.noErr(err)
				equal(t, "attempts of the endpoint", want, ids(p.Data, attemptID))
			}
			want = map[bool][]string{true: {d.ID}, false: {}}[appID == app.ID]
			for _, status := range []hookd.DeliveryStatus{"", hookd.DeliveryFailed} {
				p, err := f.store.ListDeliveries(f.ctx, hookd.DeliveryFilter{AppID: appID, EndpointID: ep.ID, Status: status})
				f.noErr(err)
				equal(t, "deliveries of the endpoint", want, ids(p.Data, deliveryID))
			}
		}
		// An endpoint deleted since: its rows stay listed, by the application's filter.
		f.write(func(tx hookd.Tx) error { return tx.DeleteEndpoint(f.ctx, ep.ID) })
		p, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID, EndpointID: ep.ID, EventTypes: []string{"user.created"}})
		f.noErr(err)
		equal(t, "attempts of a deleted endpoint", []string{a.ID}, ids(p.Data, attemptID))
		p, err = f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: other.ID, EndpointID: ep.ID})
		f.noErr(err)
		equal(t, "attempts of a deleted endpoint, another application", []string{}, ids(p.Data, attemptID))
	}},
}
