package storetest

import (
	"testing"

	"github.com/hookd/hookd"
)

func (f *fixture) insertSession(s hookd.Session) error {
	return f.writeErr(func(tx hookd.Tx) error { return tx.InsertSession(f.ctx, &s) })
}

var sessionTests = []test{
	{"RoundTrip", func(t *testing.T, f *fixture) {
		app := f.newApp()
		dashboard := hookd.Session{Hash: hash("a"), TokenHash: hash("t1"), CreatedAt: at(0), ExpiresAt: at(3600)}
		portal := hookd.Session{Hash: hash("b"), TokenHash: hash("t2"), AppID: app.ID, CreatedAt: at(1), ExpiresAt: at(3600)}
		for _, s := range []hookd.Session{dashboard, portal} {
			f.noErr(f.insertSession(s))
		}
		for _, want := range []hookd.Session{dashboard, portal} {
			got, err := f.store.GetSession(f.ctx, want.Hash, at(2))
			f.noErr(err)
			equal(t, "session", want, *got)
		}
		_, err := f.store.GetSession(f.ctx, hash("c"), at(2))
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetSession(f.ctx, dashboard.TokenHash, at(2))
		f.isErr(err, hookd.ErrNotFound) // found by its own hash only, never by its token's
	}},
	{"Expiry", func(t *testing.T, f *fixture) {
		s := hookd.Session{Hash: hash("a"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(10)}
		f.noErr(f.insertSession(s))
		got, err := f.store.GetSession(f.ctx, s.Hash, at(10).Add(-1e3))
		f.noErr(err)
		equal(t, "session a microsecond before it expires", s, *got)
		_, err = f.store.GetSession(f.ctx, s.Hash, at(10))
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"Delete", func(t *testing.T, f *fixture) {
		gone := hookd.Session{Hash: hash("a"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(60)}
		keep := hookd.Session{Hash: hash("b"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(60)}
		f.noErr(f.insertSession(gone))
		f.noErr(f.insertSession(keep))
		f.write(func(tx hookd.Tx) error { return tx.DeleteSession(f.ctx, gone.Hash) })
		_, err := f.store.GetSession(f.ctx, gone.Hash, at(1))
		f.isErr(err, hookd.ErrNotFound)
		got, err := f.store.GetSession(f.ctx, keep.Hash, at(1))
		f.noErr(err)
		equal(t, "the other session of the same token", keep, *got)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteSession(f.ctx, gone.Hash) }), hookd.ErrNotFound)
	}},
	{"Conflicts", func(t *testing.T, f *fixture) {
		s := hookd.Session{Hash: hash("a"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(60)}
		f.noErr(f.insertSession(s))
		dup := hookd.Session{Hash: s.Hash, TokenHash: hash("u"), CreatedAt: at(1), ExpiresAt: at(90)}
		f.isErr(f.insertSession(dup), hookd.ErrConflict)
		got, err := f.store.GetSession(f.ctx, s.Hash, at(2))
		f.noErr(err)
		equal(t, "session after the conflict", s, *got)

		orphan := hookd.Session{Hash: hash("b"), TokenHash: hash("t"), AppID: "app_missing", CreatedAt: at(0), ExpiresAt: at(60)}
		f.isErr(f.insertSession(orphan), hookd.ErrNotFound)
	}},
	{"PurgesExpired", func(t *testing.T, f *fixture) {
		expired := hookd.Session{Hash: hash("a"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(5)}
		due := hookd.Session{Hash: hash("b"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(10)}
		live := hookd.Session{Hash: hash("c"), TokenHash: hash("t"), CreatedAt: at(0), ExpiresAt: at(20)}
		for _, s := range []hookd.Session{expired, due, live} {
			f.noErr(f.insertSession(s))
		}
		f.noErr(f.insertSession(hookd.Session{Hash: hash("d"), TokenHash: hash("t"), CreatedAt: at(10), ExpiresAt: at(30)}))
		// Read as of before any expired: the purged rows are gone, not merely hidden.
		for _, h := range []string{expired.Hash, due.Hash} {
			_, err := f.store.GetSession(f.ctx, h, at(1))
			f.isErr(err, hookd.ErrNotFound)
		}
		got, err := f.store.GetSession(f.ctx, live.Hash, at(1))
		f.noErr(err)
		equal(t, "live session", live, *got)
	}},
	{"DeleteApplicationCascades", func(t *testing.T, f *fixture) {
		app, other := f.newApp(), f.newApp()
		portal := hookd.Session{Hash: hash("a"), TokenHash: hash("t1"), AppID: app.ID, CreatedAt: at(0), ExpiresAt: at(60)}
		otherPortal := hookd.Session{Hash: hash("b"), TokenHash: hash("t2"), AppID: other.ID, CreatedAt: at(0), ExpiresAt: at(60)}
		dashboard := hookd.Session{Hash: hash("c"), TokenHash: hash("t3"), CreatedAt: at(0), ExpiresAt: at(60)}
		for _, s := range []hookd.Session{portal, otherPortal, dashboard} {
			f.noErr(f.insertSession(s))
		}
		f.write(func(tx hookd.Tx) error { return tx.DeleteApplication(f.ctx, app.ID) })
		_, err := f.store.GetSession(f.ctx, portal.Hash, at(1))
		f.isErr(err, hookd.ErrNotFound)
		for _, want := range []hookd.Session{otherPortal, dashboard} {
			got, err := f.store.GetSession(f.ctx, want.Hash, at(1))
			f.noErr(err)
			equal(t, "session kept", want, *got)
		}
	}},
}
