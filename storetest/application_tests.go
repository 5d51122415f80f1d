package storetest

import (
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// printableUIDs are ids a producer may use for its customers and events; none may break a lookup.
var printableUIDs = []string{
	"order:1001", "acct:7", "a-b", "org:42", "with space", " leading and trailing ", "ünïcødé ✓ 日本",
	"quote'and\"double", "percent%20and?query#frag", "semi;colon", "back\\slash", "a_b.c~d", "%", "_",
}

var applicationTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		full := f.newApp(func(a *hookd.Application) {
			a.UID = "acme"
			a.Name = "Acme Ünïcødé"
			a.ThrottleRate = 25
			a.RetrySchedule = []time.Duration{time.Second, 20 * time.Minute}
			a.AttemptTimeout = 4 * time.Second
			a.Metadata = map[string]string{"plan": "pro", "région": "eu", "empty": ""}
			a.UpdatedAt = at(5)
		})
		bare := f.newApp(func(a *hookd.Application) { a.Metadata = map[string]string{} })
		equal(t, "by id", full, *f.getApp(full.ID))
		equal(t, "by uid", full, *f.getApp("acme"))
		bare.Metadata = nil // empty maps read back nil
		equal(t, "bare", bare, *f.getApp(bare.ID))
	}},
	{"PrintableUIDs", func(t *testing.T, f *fixture) {
		for _, uid := range printableUIDs {
			app := f.newApp(func(a *hookd.Application) { a.UID = uid })
			equal(t, "uid "+uid, app, *f.getApp(uid))
		}
	}},
	{"IDBeforeUID", func(t *testing.T, f *fixture) {
		// The id's owner sorts first in one pair and last in the other.
		older := f.newApp()
		newer := f.newApp(func(a *hookd.Application) { a.UID = older.ID })
		uidOwner := f.newApp(func(a *hookd.Application) { a.UID = newID("app_") })
		idOwner := f.newApp(func(a *hookd.Application) { a.ID = uidOwner.UID })
		equal(t, "an id that is also a newer application's uid", older, *f.getApp(older.ID))
		equal(t, "an id that is also an older application's uid", idOwner, *f.getApp(idOwner.ID))
		f.noErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteApplication(f.ctx, older.ID) }))
		equal(t, "uid once the id is gone", newer, *f.getApp(older.ID))
	}},
	{"GetMissing", func(t *testing.T, f *fixture) {
		f.newApp(func(a *hookd.Application) { a.UID = "acme" })
		_, err := f.store.GetApplication(f.ctx, "app_missing")
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetApplication(f.ctx, "")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"Conflicts", func(t *testing.T, f *fixture) {
		app := f.newApp(func(a *hookd.Application) { a.UID = "order:1001" })
		f.newApp() // several applications without a uid
		f.newApp()
		err := f.writeErr(func(tx hookd.Tx) error {
			return tx.InsertApplication(f.ctx, &hookd.Application{ID: newID("app_"), UID: "order:1001", CreatedAt: at(0), UpdatedAt: at(0)})
		})
		f.isConflict(err, "application", "uid", "order:1001")
		err = f.writeErr(func(tx hookd.Tx) error {
			return tx.InsertApplication(f.ctx, &hookd.Application{ID: app.ID, CreatedAt: at(0), UpdatedAt: at(0)})
		})
		f.isConflict(err, "application", "id", app.ID)
		page, err := f.store.ListApplications(f.ctx, hookd.ListOptions{})
		f.noErr(err)
		if len(page.Data) != 3 {
			t.Fatalf("want 3 applications after the conflicts, got %d", len(page.Data))
		}
	}},
	{"Update", func(t *testing.T, f *fixture) {
		app := f.newApp(func(a *hookd.Application) {
			a.UID = "before"
			a.Metadata = map[string]string{"a": "1"}
		})
		other := f.newApp(func(a *hookd.Application) { a.UID = "taken" })
		upd := app
		upd.UID, upd.Name, upd.ThrottleRate, upd.Metadata = "after:1", "Renamed", 7, map[string]string{"b": "2"}
		upd.CreatedAt, upd.UpdatedAt = at(100), at(101)
		f.write(func(tx hookd.Tx) error { return tx.UpdateApplication(f.ctx, &upd) })
		want := upd
		want.CreatedAt = app.CreatedAt // kept
		equal(t, "updated", want, *f.getApp("after:1"))
		_, err := f.store.GetApplication(f.ctx, "before")
		f.isErr(err, hookd.ErrNotFound)

		upd.UID, upd.Metadata = "", nil // a uid and metadata removed
		f.write(func(tx hookd.Tx) error { return tx.UpdateApplication(f.ctx, &upd) })
		want.UID, want.Metadata = "", nil
		equal(t, "uid removed", want, *f.getApp(app.ID))

		upd.UID = other.UID
		f.isConflict(f.writeErr(func(tx hookd.Tx) error { return tx.UpdateApplication(f.ctx, &upd) }), "application", "uid", "taken")
		missing := hookd.Application{ID: "app_missing", Name: "x"}
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.UpdateApplication(f.ctx, &missing) }), hookd.ErrNotFound)
	}},
	{"DeleteCascades", func(t *testing.T, f *fixture) {
		app := f.newApp()
		keep := f.newApp()
		ep := f.newEndpoint(app.ID)
		keepEp := f.newEndpoint(keep.ID)
		msg := f.newMessage(app.ID, func(m *hookd.Message) { m.EventID = "evt-1" })
		keepMsg := f.newMessage(keep.ID, func(m *hookd.Message) { m.EventID = "evt-1" })
		d := f.newDelivery(msg, ep.ID)
		keepD := f.newDelivery(keepMsg, keepEp.ID)
		a := attempt(d, 1, at(3))
		keepA := attempt(keepD, 1, at(3))
		f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryPending},
			hookd.AttemptRecord{Attempt: keepA, Status: hookd.DeliveryPending})
		ev := hookd.OperationalEvent{ID: newID("evt_"), Type: hookd.OpEndpointDisabled, AppID: app.ID, EndpointID: ep.ID, At: at(4)}
		f.write(func(tx hookd.Tx) error { return tx.InsertOperationalEvents(f.ctx, []hookd.OperationalEvent{ev}) })

		f.write(func(tx hookd.Tx) error { return tx.DeleteApplication(f.ctx, app.ID) })

		_, err := f.store.GetApplication(f.ctx, app.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetEndpointByID(f.ctx, ep.ID)
		f.isErr(err, hookd.ErrNotFound)
		keys, err := f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		if len(keys) != 0 {
			t.Fatalf("signing keys of a deleted application's endpoint: %d left", len(keys))
		}
		_, err = f.store.GetMessage(f.ctx, app.ID, msg.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetDelivery(f.ctx, d.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetAttempt(f.ctx, a.ID)
		f.isErr(err, hookd.ErrNotFound)
		atts, err := f.store.ListAttempts(f.ctx, hookd.AttemptFilter{AppID: app.ID})
		f.noErr(err)
		if len(atts.Data) != 0 {
			t.Fatalf("attempts of a deleted application: %d left", len(atts.Data))
		}
		evs, err := f.store.ListOperationalEvents(f.ctx, hookd.ListOptions{})
		f.noErr(err)
		equal(t, "operational events", []hookd.OperationalEvent{ev}, evs.Data)

		// The other application is untouched.
		f.getApp(keep.ID)
		f.getEndpoint(keepEp.ID)
		f.getDelivery(keepD.ID)
		_, err = f.store.GetMessage(f.ctx, keep.ID, "evt-1")
		f.noErr(err)
		_, err = f.store.GetAttempt(f.ctx, keepA.ID)
		f.noErr(err)

		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteApplication(f.ctx, app.ID) }), hookd.ErrNotFound)
	}},
}
