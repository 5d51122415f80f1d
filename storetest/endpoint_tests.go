package storetest

import (
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// fullEndpoint sets every field of an endpoint, health included.
func fullEndpoint(e *hookd.Endpoint) {
	e.UID = "ep:main ✓"
	e.URL = "https://receiver.example/hooks?tenant=a&x=ü"
	e.Description = "primary receiver"
	e.Version = 3
	e.EventTypes = []string{"invoice.paid", "invoice.voided"}
	e.Channels = []string{"project:1", "eu"}
	e.Disabled = true
	e.DisabledReason = "manual"
	e.DisabledAt = ptr(at(7))
	e.RateLimit = 10
	e.MaxInFlight = 4
	e.Headers = map[string]string{"X-Tenant": "acme", "Authorization": "Bearer x"}
	e.Scheme = hookd.SchemeStripe
	e.RetrySchedule = []time.Duration{5 * time.Second, time.Minute, 36 * time.Hour}
	e.AttemptTimeout = 2500 * time.Millisecond
	e.Ordered = true
	e.Metadata = map[string]string{"team": "billing"}
	e.UpdatedAt = at(8)
	e.LastAttemptAt = ptr(at(9))
	e.LastStatus = 503
	e.LastError = "HTTP 503"
	e.LastSuccessAt = ptr(at(6))
	e.FailingSince = ptr(at(9))
	e.ConsecutiveFailures = 2
}

var endpointTests = []test{
	{"RetryPolicy", func(t *testing.T, f *fixture) {
		// A nil schedule (inherit) and an empty one (no retries) stay apart, on insert and update,
		// and a zero timeout (inherit) reads back zero.
		app := f.newApp(func(a *hookd.Application) {
			a.RetrySchedule, a.AttemptTimeout = []time.Duration{time.Second, 10 * time.Millisecond}, 3*time.Second
		})
		equal(t, "application", app, *f.getApp(app.ID))
		none := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.RetrySchedule = []time.Duration{} })
		inherit := f.newEndpoint(app.ID)
		equal(t, "no retries", none, *f.getEndpoint(none.ID))
		equal(t, "inherit", inherit, *f.getEndpoint(inherit.ID))

		none.RetrySchedule, none.AttemptTimeout = nil, 0
		inherit.RetrySchedule, inherit.AttemptTimeout = []time.Duration{}, 90*time.Second
		f.write(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &none) })
		f.write(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &inherit) })
		equal(t, "updated to inherit", none, *f.getEndpoint(none.ID))
		equal(t, "updated to no retries", inherit, *f.getEndpoint(inherit.ID))

		app.RetrySchedule, app.AttemptTimeout = nil, 0
		f.write(func(tx hookd.Tx) error { return tx.UpdateApplication(f.ctx, &app) })
		equal(t, "application updated to inherit", app, *f.getApp(app.ID))
	}},
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app := f.newApp()
		full := f.newEndpoint(app.ID, fullEndpoint)
		bare := f.newEndpoint(app.ID, func(e *hookd.Endpoint) {
			e.EventTypes, e.Channels = []string{}, []string{}
			e.Headers, e.Metadata = map[string]string{}, map[string]string{}
			e.Scheme = ""
		})
		got, err := f.store.GetEndpoint(f.ctx, app.ID, full.ID)
		f.noErr(err)
		equal(t, "by id", full, *got)
		got, err = f.store.GetEndpoint(f.ctx, app.ID, full.UID)
		f.noErr(err)
		equal(t, "by uid", full, *got)
		equal(t, "by id alone", full, *f.getEndpoint(full.ID))
		bare.EventTypes, bare.Channels, bare.Headers, bare.Metadata = nil, nil, nil, nil
		equal(t, "bare", bare, *f.getEndpoint(bare.ID))
	}},
	{"UIDsPerApplication", func(t *testing.T, f *fixture) {
		a, b := f.newApp(), f.newApp()
		for _, uid := range printableUIDs {
			epA := f.newEndpoint(a.ID, func(e *hookd.Endpoint) { e.UID = uid })
			epB := f.newEndpoint(b.ID, func(e *hookd.Endpoint) { e.UID = uid }) // same uid, other app
			got, err := f.store.GetEndpoint(f.ctx, a.ID, uid)
			f.noErr(err)
			equal(t, "uid "+uid+" in a", epA, *got)
			got, err = f.store.GetEndpoint(f.ctx, b.ID, uid)
			f.noErr(err)
			equal(t, "uid "+uid+" in b", epB, *got)
		}
		f.newEndpoint(a.ID) // several endpoints without a uid
		f.newEndpoint(a.ID)
		err := f.writeErr(func(tx hookd.Tx) error {
			ep := hookd.Endpoint{ID: newID("ep_"), AppID: a.ID, UID: "a-b", URL: "https://x.example", CreatedAt: at(0), UpdatedAt: at(0)}
			return tx.InsertEndpoint(f.ctx, &ep, hookd.SigningKey{Secret: "whsec_x", CreatedAt: at(0)})
		})
		f.isConflict(err, "endpoint", "uid", "a-b")
	}},
	{"IDBeforeUID", func(t *testing.T, f *fixture) {
		app := f.newApp()
		older := f.newEndpoint(app.ID)
		f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.UID = older.ID })
		uidOwner := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.UID = newID("ep_") })
		idOwner := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.ID = uidOwner.UID })
		for _, want := range []hookd.Endpoint{older, idOwner} {
			got, err := f.store.GetEndpoint(f.ctx, app.ID, want.ID)
			f.noErr(err)
			equal(t, "an id that is also another endpoint's uid", want, *got)
		}
	}},
	{"OtherApplication", func(t *testing.T, f *fixture) {
		a, b := f.newApp(), f.newApp()
		ep := f.newEndpoint(a.ID, func(e *hookd.Endpoint) { e.UID = "main" })
		_, err := f.store.GetEndpoint(f.ctx, b.ID, ep.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetEndpoint(f.ctx, b.ID, "main")
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetEndpointByID(f.ctx, "ep_missing")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"InsertErrors", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		key := hookd.SigningKey{Secret: "whsec_x", CreatedAt: at(0)}
		err := f.writeErr(func(tx hookd.Tx) error {
			e := hookd.Endpoint{ID: newID("ep_"), AppID: "app_missing", URL: "https://x.example", CreatedAt: at(0), UpdatedAt: at(0)}
			return tx.InsertEndpoint(f.ctx, &e, key)
		})
		f.isErr(err, hookd.ErrNotFound)
		err = f.writeErr(func(tx hookd.Tx) error {
			e := hookd.Endpoint{ID: ep.ID, AppID: app.ID, URL: "https://x.example", CreatedAt: at(0), UpdatedAt: at(0)}
			return tx.InsertEndpoint(f.ctx, &e, key)
		})
		f.isConflict(err, "endpoint", "id", ep.ID)
	}},
	{"UpdateWritesConfigurationOnly", func(t *testing.T, f *fixture) {
		app := f.newApp()
		other := f.newApp()
		f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.UID = "taken" })
		ep := f.newEndpoint(app.ID, fullEndpoint)
		upd := ep
		upd.AppID = other.ID
		upd.UID = "renamed:1"
		upd.URL = "https://new.example/in"
		upd.Description = "new"
		upd.Version = 4
		upd.EventTypes = []string{"user.created"}
		upd.Channels = nil
		upd.RateLimit, upd.MaxInFlight = 0, 9
		upd.Headers = nil
		upd.Scheme = hookd.SchemeSvix
		upd.Metadata = map[string]string{"k": "v"}
		upd.CreatedAt, upd.UpdatedAt = at(50), at(51)
		// Neither health nor the disabled state is configuration.
		upd.Disabled, upd.DisabledReason, upd.DisabledAt = false, "", nil
		upd.LastAttemptAt, upd.LastStatus, upd.LastError, upd.LastSuccessAt = nil, 0, "", nil
		upd.FailingSince, upd.ConsecutiveFailures = nil, 0
		f.write(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &upd) })

		want := ep
		want.UID, want.URL, want.Description, want.Version = upd.UID, upd.URL, upd.Description, upd.Version
		want.EventTypes, want.Channels, want.RateLimit, want.MaxInFlight = upd.EventTypes, nil, 0, 9
		want.Headers, want.Scheme, want.Metadata, want.UpdatedAt = nil, upd.Scheme, upd.Metadata, at(51)
		equal(t, "updated", want, *f.getEndpoint(ep.ID))

		upd.UID = "taken"
		f.isConflict(f.writeErr(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &upd) }), "endpoint", "uid", "taken")
		upd.ID = "ep_missing"
		upd.UID = ""
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.UpdateEndpoint(f.ctx, &upd) }), hookd.ErrNotFound)
	}},
	{"DeleteKeepsDeliveries", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d := f.newDelivery(msg, ep.ID)
		a := attempt(d, 1, at(3))
		f.record(hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryFailed})
		d = *f.getDelivery(d.ID)

		f.write(func(tx hookd.Tx) error { return tx.DeleteEndpoint(f.ctx, ep.ID) })

		_, err := f.store.GetEndpointByID(f.ctx, ep.ID)
		f.isErr(err, hookd.ErrNotFound)
		keys, err := f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		if len(keys) != 0 {
			t.Fatalf("signing keys of a deleted endpoint: %d left", len(keys))
		}
		equal(t, "delivery", d, *f.getDelivery(d.ID))
		got, err := f.store.GetAttempt(f.ctx, a.ID)
		f.noErr(err)
		equal(t, "attempt", a, *got)
		page, err := f.store.ListDeliveries(f.ctx, hookd.DeliveryFilter{EndpointID: ep.ID})
		f.noErr(err)
		equal(t, "deliveries of the deleted endpoint", []hookd.Delivery{d}, page.Data)
		// A late attempt of the deleted endpoint is still recorded.
		late := attempt(d, 2, at(4))
		f.record(hookd.AttemptRecord{Attempt: late, Status: hookd.DeliveryCancelled})

		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteEndpoint(f.ctx, ep.ID) }), hookd.ErrNotFound)
	}},
	{"SetDisabled", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) {
			e.LastAttemptAt, e.LastStatus, e.LastError = ptr(at(3)), 500, "HTTP 500"
			e.LastSuccessAt, e.FailingSince, e.ConsecutiveFailures = ptr(at(2)), ptr(at(3)), 12
		})
		f.write(func(tx hookd.Tx) error { return tx.SetEndpointDisabled(f.ctx, ep.ID, true, "gone (HTTP 410)", at(20)) })
		want := ep
		want.Disabled, want.DisabledReason, want.DisabledAt, want.UpdatedAt = true, "gone (HTTP 410)", ptr(at(20)), at(20)
		equal(t, "disabled", want, *f.getEndpoint(ep.ID))
		enabled, err := f.store.EnabledEndpoints(f.ctx, app.ID)
		f.noErr(err)
		if len(enabled) != 0 {
			t.Fatalf("a disabled endpoint is listed as enabled")
		}

		f.write(func(tx hookd.Tx) error { return tx.SetEndpointDisabled(f.ctx, ep.ID, false, "ignored", at(30)) })
		want = ep
		want.UpdatedAt, want.FailingSince, want.ConsecutiveFailures = at(30), nil, 0
		equal(t, "enabled again", want, *f.getEndpoint(ep.ID))

		err = f.writeErr(func(tx hookd.Tx) error { return tx.SetEndpointDisabled(f.ctx, "ep_missing", true, "x", at(1)) })
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"EnabledEndpoints", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		e1 := f.newEndpoint(app.ID)
		f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Disabled, e.DisabledReason, e.DisabledAt = true, "manual", ptr(at(1)) })
		f.newEndpoint(other.ID)
		e3 := f.newEndpoint(app.ID, fullEndpoint) // every filter set: matching is not the store's
		e3.Disabled, e3.DisabledReason, e3.DisabledAt = false, "", nil
		f.write(func(tx hookd.Tx) error { return tx.SetEndpointDisabled(f.ctx, e3.ID, false, "", e3.UpdatedAt) })
		e3.FailingSince, e3.ConsecutiveFailures = nil, 0
		got, err := f.store.EnabledEndpoints(f.ctx, app.ID)
		f.noErr(err)
		equal(t, "enabled endpoints", []hookd.Endpoint{e1, e3}, got)
		none, err := f.store.EnabledEndpoints(f.ctx, "app_missing")
		f.noErr(err)
		if len(none) != 0 {
			t.Fatalf("enabled endpoints of a missing application: %d", len(none))
		}
	}},
}

var signingKeyTests = []test{
	{"FirstKey", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		keys, err := f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "keys", []hookd.SigningKey{{Secret: "whsec_" + ep.ID, CreatedAt: ep.CreatedAt}}, keys)
	}},
	{"RotationExpiresOthers", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.CreatedAt = at(0) })
		first := hookd.SigningKey{Secret: "whsec_" + ep.ID, CreatedAt: at(0)}
		soon := hookd.SigningKey{Secret: "whsec_soon", CreatedAt: at(10), ExpiresAt: ptr(at(50))}
		late := hookd.SigningKey{Secret: "whsk_late", CreatedAt: at(20), ExpiresAt: ptr(at(5000))}
		f.write(func(tx hookd.Tx) error { return tx.AddSigningKey(f.ctx, ep.ID, soon, at(1000)) })
		f.write(func(tx hookd.Tx) error { return tx.AddSigningKey(f.ctx, ep.ID, late, at(1000)) })
		// After the two additions: first expires at 1000, soon keeps 50 (sooner), late as given.
		first.ExpiresAt = ptr(at(1000))
		keys, err := f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "after two rotations", []hookd.SigningKey{late, soon, first}, keys)

		newest := hookd.SigningKey{Secret: "whsec_newest", CreatedAt: at(30)}
		f.write(func(tx hookd.Tx) error { return tx.AddSigningKey(f.ctx, ep.ID, newest, at(100)) })
		first.ExpiresAt, late.ExpiresAt = ptr(at(100)), ptr(at(100))
		keys, err = f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "after a third rotation", []hookd.SigningKey{newest, late, soon, first}, keys)

		// Keys of other endpoints are untouched.
		other := f.newEndpoint(app.ID)
		f.write(func(tx hookd.Tx) error {
			return tx.AddSigningKey(f.ctx, other.ID, hookd.SigningKey{Secret: "whsec_o", CreatedAt: at(40)}, at(40))
		})
		keys, err = f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "unchanged by another endpoint's rotation", []hookd.SigningKey{newest, late, soon, first}, keys)
	}},
	{"SameCreationTime", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.CreatedAt = at(0) })
		second := hookd.SigningKey{Secret: "whsec_second", CreatedAt: at(0)}
		f.write(func(tx hookd.Tx) error { return tx.AddSigningKey(f.ctx, ep.ID, second, at(0)) })
		keys, err := f.store.SigningKeys(f.ctx, ep.ID)
		f.noErr(err)
		equal(t, "the key added last comes first", []string{"whsec_second", "whsec_" + ep.ID},
			ids(keys, func(k hookd.SigningKey) string { return k.Secret }))
	}},
	{"MissingEndpoint", func(t *testing.T, f *fixture) {
		err := f.writeErr(func(tx hookd.Tx) error {
			return tx.AddSigningKey(f.ctx, "ep_missing", hookd.SigningKey{Secret: "whsec_x", CreatedAt: at(0)}, at(0))
		})
		f.isErr(err, hookd.ErrNotFound)
	}},
}
