package storetest

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// hash returns a token hash of the shape the server stores (64 hex digits), distinct per seed.
func hash(seed string) string {
	const hex = "0123456789abcdef"
	out := []byte(seed)
	for len(out) < 64 {
		out = append(out, hex[len(out)%16])
	}
	return string(out[:64])
}

func (f *fixture) insertToken(tok hookd.Token) {
	f.t.Helper()
	f.write(func(tx hookd.Tx) error { return tx.InsertToken(f.ctx, &tok) })
}

func (f *fixture) putIdempotent(r hookd.IdempotentResponse) error {
	return f.writeErr(func(tx hookd.Tx) error { return tx.PutIdempotentResponse(f.ctx, &r) })
}

var tokenTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app := f.newApp()
		admin := hookd.Token{Hash: hash("a"), CreatedAt: at(0)}
		portal := hookd.Token{Hash: hash("b"), AppID: app.ID, CreatedAt: at(1), ExpiresAt: ptr(at(3600))}
		f.insertToken(admin)
		f.insertToken(portal)
		for _, want := range []hookd.Token{admin, portal} {
			got, err := f.store.GetToken(f.ctx, want.Hash, at(2))
			f.noErr(err)
			equal(t, "token", want, *got)
		}
		_, err := f.store.GetToken(f.ctx, hash("c"), at(2))
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"ReadOnlyAndFeatureFlags", func(t *testing.T, f *fixture) {
		app := f.newApp()
		limited := hookd.Token{Hash: hash("a"), AppID: app.ID, CreatedAt: at(0), ExpiresAt: ptr(at(3600)),
			ReadOnly: true, FeatureFlags: []string{"beta", "beta-2.x_y"}}
		full := hookd.Token{Hash: hash("b"), AppID: app.ID, CreatedAt: at(0)}
		f.insertToken(limited)
		f.insertToken(full)
		for _, want := range []hookd.Token{limited, full} {
			got, err := f.store.GetToken(f.ctx, want.Hash, at(1))
			f.noErr(err)
			equal(t, "token", want, *got)
		}
	}},
	{"Expired", func(t *testing.T, f *fixture) {
		tok := hookd.Token{Hash: hash("a"), CreatedAt: at(0), ExpiresAt: ptr(at(10))}
		f.insertToken(tok)
		got, err := f.store.GetToken(f.ctx, tok.Hash, at(10).Add(-1e3))
		f.noErr(err)
		equal(t, "token a microsecond before it expires", tok, *got)
		_, err = f.store.GetToken(f.ctx, tok.Hash, at(10))
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetToken(f.ctx, tok.Hash, at(3600))
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"Delete", func(t *testing.T, f *fixture) {
		gone := hookd.Token{Hash: hash("a"), CreatedAt: at(0)}
		keep := hookd.Token{Hash: hash("b"), CreatedAt: at(0)}
		f.insertToken(gone)
		f.insertToken(keep)
		f.write(func(tx hookd.Tx) error { return tx.DeleteToken(f.ctx, gone.Hash) })
		_, err := f.store.GetToken(f.ctx, gone.Hash, at(1))
		f.isErr(err, hookd.ErrNotFound)
		got, err := f.store.GetToken(f.ctx, keep.Hash, at(1))
		f.noErr(err)
		equal(t, "the other token", keep, *got)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteToken(f.ctx, gone.Hash) }), hookd.ErrNotFound)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteToken(f.ctx, hash("c")) }), hookd.ErrNotFound)
	}},
	{"Conflicts", func(t *testing.T, f *fixture) {
		app := f.newApp()
		tok := hookd.Token{Hash: hash("a"), CreatedAt: at(0)}
		f.insertToken(tok)
		dup := hookd.Token{Hash: tok.Hash, AppID: app.ID, CreatedAt: at(5), ExpiresAt: ptr(at(60))}
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.InsertToken(f.ctx, &dup) }), hookd.ErrConflict)
		got, err := f.store.GetToken(f.ctx, tok.Hash, at(1))
		f.noErr(err)
		equal(t, "token after the conflict", tok, *got)

		orphan := hookd.Token{Hash: hash("b"), AppID: "app_missing", CreatedAt: at(0)}
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.InsertToken(f.ctx, &orphan) }), hookd.ErrNotFound)
	}},
	{"DeleteApplicationCascades", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		portal := hookd.Token{Hash: hash("a"), AppID: app.ID, CreatedAt: at(0)}
		otherPortal := hookd.Token{Hash: hash("b"), AppID: other.ID, CreatedAt: at(0)}
		admin := hookd.Token{Hash: hash("c"), CreatedAt: at(0)}
		for _, tok := range []hookd.Token{portal, otherPortal, admin} {
			f.insertToken(tok)
		}
		f.write(func(tx hookd.Tx) error { return tx.DeleteApplication(f.ctx, app.ID) })
		_, err := f.store.GetToken(f.ctx, portal.Hash, at(1))
		f.isErr(err, hookd.ErrNotFound)
		for _, want := range []hookd.Token{otherPortal, admin} {
			got, err := f.store.GetToken(f.ctx, want.Hash, at(1))
			f.noErr(err)
			equal(t, "token kept", want, *got)
		}
	}},
}

var idempotencyTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		full := hookd.IdempotentResponse{
			Key: hash("a") + " POST /api/v1/app/ key-1", Status: 201,
			Body:        []byte("{\"id\":\"app_1\"}\n\x00bytes ü"),
			RequestHash: []byte("\x00\xffdigest\x00"), CreatedAt: at(0), ExpiresAt: at(3600),
		}
		empty := hookd.IdempotentResponse{Key: "key-2", Status: 204, CreatedAt: at(0), ExpiresAt: at(3600)}
		for _, r := range []hookd.IdempotentResponse{full, empty} {
			f.noErr(f.putIdempotent(r))
		}
		for _, want := range []hookd.IdempotentResponse{full, empty} {
			got, err := f.store.GetIdempotentResponse(f.ctx, want.Key, at(1))
			f.noErr(err)
			equal(t, "response", want, *got)
		}
		_, err := f.store.GetIdempotentResponse(f.ctx, "key-missing", at(1))
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"ExpiredIsReplaced", func(t *testing.T, f *fixture) {
		old := hookd.IdempotentResponse{Key: "key-1", Status: 200, Body: []byte(`{"v":1}`), CreatedAt: at(0), ExpiresAt: at(10)}
		f.noErr(f.putIdempotent(old))
		got, err := f.store.GetIdempotentResponse(f.ctx, old.Key, at(10).Add(-1e3))
		f.noErr(err)
		equal(t, "response a microsecond before it expires", old, *got)
		_, err = f.store.GetIdempotentResponse(f.ctx, old.Key, at(10))
		f.isErr(err, hookd.ErrNotFound)

		fresh := hookd.IdempotentResponse{Key: old.Key, Status: 201, Body: []byte(`{"v":2}`), CreatedAt: at(10), ExpiresAt: at(20)}
		f.noErr(f.putIdempotent(fresh))
		got, err = f.store.GetIdempotentResponse(f.ctx, old.Key, at(11))
		f.noErr(err)
		equal(t, "the replacement", fresh, *got)
	}},
	{"LiveConflicts", func(t *testing.T, f *fixture) {
		live := hookd.IdempotentResponse{Key: "key-1", Status: 200, Body: []byte(`{"v":1}`), CreatedAt: at(0), ExpiresAt: at(10)}
		f.noErr(f.putIdempotent(live))
		dup := hookd.IdempotentResponse{Key: live.Key, Status: 500, Body: []byte(`{"v":2}`), CreatedAt: at(5), ExpiresAt: at(15)}
		f.isErr(f.putIdempotent(dup), hookd.ErrConflict)
		got, err := f.store.GetIdempotentResponse(f.ctx, live.Key, at(6))
		f.noErr(err)
		equal(t, "response after the conflict", live, *got)
	}},
	{"PurgesExpired", func(t *testing.T, f *fixture) {
		expired := hookd.IdempotentResponse{Key: "key-expired", Status: 200, CreatedAt: at(0), ExpiresAt: at(5)}
		due := hookd.IdempotentResponse{Key: "key-due", Status: 200, CreatedAt: at(0), ExpiresAt: at(10)}
		live := hookd.IdempotentResponse{Key: "key-live", Status: 200, CreatedAt: at(0), ExpiresAt: at(20)}
		for _, r := range []hookd.IdempotentResponse{expired, due, live} {
			f.noErr(f.putIdempotent(r))
		}
		f.noErr(f.putIdempotent(hookd.IdempotentResponse{Key: "key-new", Status: 200, CreatedAt: at(10), ExpiresAt: at(30)}))
		// Read as of before any expired: the purged rows are gone, not merely hidden.
		for _, key := range []string{expired.Key, due.Key} {
			_, err := f.store.GetIdempotentResponse(f.ctx, key, at(1))
			f.isErr(err, hookd.ErrNotFound)
		}
		got, err := f.store.GetIdempotentResponse(f.ctx, live.Key, at(1))
		f.noErr(err)
		equal(t, "live response", live, *got)
	}},
}

var endpointStatsTests = []test{
	{"CountsAttemptsInWindow", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep, other := f.newEndpoint(app.ID), f.newEndpoint(app.ID)
		// Two messages to ep fail twice, then succeed; one to other fails once.
		for _, start := range []int{10, 20} {
			d := f.newDelivery(f.newMessage(app.ID), ep.ID)
			f.record(
				hookd.AttemptRecord{Attempt: attempt(d, 1, at(start)), Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(start + 1))},
				hookd.AttemptRecord{Attempt: attempt(d, 2, at(start+1)), Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(start + 2))},
				hookd.AttemptRecord{Attempt: attempt(d, 3, at(start+2), succeeded), Status: hookd.DeliveryDelivered},
			)
		}
		d := f.newDelivery(f.newMessage(app.ID), other.ID)
		f.record(hookd.AttemptRecord{Attempt: attempt(d, 1, at(15)), Status: hookd.DeliveryFailed})

		count := func(endpointID string, since, until time.Time) hookd.EndpointStats {
			t.Helper()
			got, err := f.store.EndpointStats(f.ctx, endpointID, since, until)
			f.noErr(err)
			return *got
		}
		equal(t, "all", hookd.EndpointStats{Success: 2, Fail: 4}, count(ep.ID, at(0), at(100)))
		equal(t, "since is inclusive", hookd.EndpointStats{Success: 1, Fail: 2}, count(ep.ID, at(20), at(100)))
		equal(t, "a microsecond after", hookd.EndpointStats{Success: 1, Fail: 1}, count(ep.ID, at(20).Add(1e3), at(100)))
		equal(t, "until is exclusive", hookd.EndpointStats{Success: 1, Fail: 2}, count(ep.ID, at(0), at(20)))
		equal(t, "until a microsecond after", hookd.EndpointStats{Success: 1, Fail: 3}, count(ep.ID, at(0), at(20).Add(1e3)))
		equal(t, "other endpoint", hookd.EndpointStats{Fail: 1}, count(other.ID, at(0), at(100)))
		equal(t, "none in the window", hookd.EndpointStats{}, count(ep.ID, at(50), at(100)))
		equal(t, "until before since", hookd.EndpointStats{}, count(ep.ID, at(100), at(0)))
		equal(t, "no attempts", hookd.EndpointStats{}, count(f.newEndpoint(app.ID).ID, at(0), at(100)))
	}},
}

var expungeAttemptResponseTests = []test{
	{"OnlyThatAttempt", func(t *testing.T, f *fixture) {
		app := f.newApp()
		ep := f.newEndpoint(app.ID)
		msg := f.newMessage(app.ID)
		d := f.newDelivery(msg, ep.ID)
		withHeaders := func(a *hookd.Attempt) {
			a.RequestHeaders = hookd.AttemptHeaders{Header: http.Header{"Webhook-Id": {a.MessageID}}}
			a.ResponseHeaders = hookd.AttemptHeaders{Header: http.Header{"Set-Cookie": {"session=1"}}}
		}
		first := attempt(d, 1, at(3), withHeaders)
		second := attempt(d, 2, at(4), succeeded, withHeaders)
		f.record(hookd.AttemptRecord{Attempt: first, Status: hookd.DeliveryPending, NextAttemptAt: ptr(at(4))},
			hookd.AttemptRecord{Attempt: second, Status: hookd.DeliveryDelivered})

		// The response goes with its headers; the request's headers stay.
		f.write(func(tx hookd.Tx) error { return tx.ExpungeAttemptResponse(f.ctx, first.ID) })
		want := first
		want.Response, want.ResponseHeaders = hookd.ExpungedResponse, hookd.AttemptHeaders{}
		got, err := f.store.GetAttempt(f.ctx, first.ID)
		f.noErr(err)
		equal(t, "expunged attempt", want, *got)
		got, err = f.store.GetAttempt(f.ctx, second.ID)
		f.noErr(err)
		equal(t, "other attempt", second, *got)

		// Expunging twice is fine; a missing attempt is not.
		f.write(func(tx hookd.Tx) error { return tx.ExpungeAttemptResponse(f.ctx, first.ID) })
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.ExpungeAttemptResponse(f.ctx, "atmpt_missing") }), hookd.ErrNotFound)
	}},
}
