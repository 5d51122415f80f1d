package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/hookd/hookd"
)

var errRollback = errors.New("storetest: roll back")

var transactionTests = []test{
	{"RollbackOnError", func(t *testing.T, f *fixture) {
		keep := f.newApp()
		keepEp := f.newEndpoint(keep.ID)
		app := hookd.Application{ID: newID("app_"), UID: "rolled-back", Name: "x", CreatedAt: at(0), UpdatedAt: at(0)}
		ep := hookd.Endpoint{ID: newID("ep_"), AppID: app.ID, URL: "https://x.example", CreatedAt: at(0), UpdatedAt: at(0)}
		msg := hookd.Message{ID: newID("msg_"), AppID: app.ID, EventID: "e1", EventType: "x", Payload: []byte(`{}`), CreatedAt: at(0)}
		err := f.store.InTx(f.ctx, func(tx hookd.Tx) error {
			f.noErr(tx.InsertApplication(f.ctx, &app))
			f.noErr(tx.InsertEndpoint(f.ctx, &ep, hookd.SigningKey{Secret: "whsec_x", CreatedAt: at(0)}))
			_, _, err := tx.InsertMessage(f.ctx, &msg)
			f.noErr(err)
			f.noErr(tx.UpsertEventType(f.ctx, &hookd.EventType{Name: "x", CreatedAt: at(0), UpdatedAt: at(0)}))
			f.noErr(tx.SetEndpointDisabled(f.ctx, keepEp.ID, true, "manual", at(1)))
			f.noErr(tx.InsertOperationalEvents(f.ctx, []hookd.OperationalEvent{{ID: newID("evt_"), Type: "x", At: at(0)}}))
			return errRollback
		})
		f.isErr(err, errRollback)
		_, err = f.store.GetApplication(f.ctx, app.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetEndpointByID(f.ctx, ep.ID)
		f.isErr(err, hookd.ErrNotFound)
		_, err = f.store.GetEventType(f.ctx, "x")
		f.isErr(err, hookd.ErrNotFound)
		if f.getEndpoint(keepEp.ID).Disabled {
			t.Fatal("a rolled back SetEndpointDisabled stayed")
		}
		evs, err := f.store.ListOperationalEvents(f.ctx, hookd.ListOptions{})
		f.noErr(err)
		if len(evs.Data) != 0 {
			t.Fatalf("rolled back operational events: %d", len(evs.Data))
		}
		// The uid and the event id are free again.
		f.newApp(func(a *hookd.Application) { a.UID = "rolled-back" })
	}},
	{"ReadsOwnWrites", func(t *testing.T, f *fixture) {
		var app hookd.Application
		f.write(func(tx hookd.Tx) error {
			app = hookd.Application{ID: newID("app_"), UID: "acme", Name: "Acme", CreatedAt: at(0), UpdatedAt: at(0)}
			f.noErr(tx.InsertApplication(f.ctx, &app))
			got, err := tx.GetApplication(f.ctx, "acme")
			f.noErr(err)
			equal(t, "read in the transaction", app, *got)
			page, err := tx.ListApplications(f.ctx, hookd.ListOptions{})
			f.noErr(err)
			equal(t, "listed in the transaction", []hookd.Application{app}, page.Data)
			msg := hookd.Message{ID: newID("msg_"), AppID: app.ID, EventType: "x", Payload: []byte(`{}`), CreatedAt: at(0)}
			_, _, err = tx.InsertMessage(f.ctx, &msg)
			f.noErr(err)
			mp, err := tx.ListMessages(f.ctx, hookd.MessageFilter{AppID: app.ID})
			f.noErr(err)
			equal(t, "messages in the transaction", []hookd.Message{msg}, mp.Data)
			return nil
		})
		equal(t, "committed", app, *f.getApp(app.ID))
	}},
	{"WrapTxOfRaw", func(t *testing.T, f *fixture) {
		app := hookd.Application{ID: newID("app_"), Name: "wrapped", CreatedAt: at(0), UpdatedAt: at(0)}
		f.write(func(tx hookd.Tx) error {
			raw := tx.Raw()
			if raw == nil {
				t.Fatal("Raw returned nil")
			}
			wrapped, err := f.store.WrapTx(raw)
			f.noErr(err)
			f.noErr(wrapped.InsertApplication(f.ctx, &app))
			got, err := tx.GetApplication(f.ctx, app.ID)
			f.noErr(err)
			equal(t, "written through the wrapped transaction", app, *got)
			return nil
		})
		equal(t, "committed", app, *f.getApp(app.ID))
	}},
	{"WrapTxOfForeignType", func(t *testing.T, f *fixture) {
		for _, raw := range []any{nil, "tx", 42, struct{}{}, &struct{}{}, f.store} {
			tx, err := f.store.WrapTx(raw)
			f.isErr(err, hookd.ErrUnsupportedTx)
			if tx != nil {
				t.Fatalf("WrapTx(%T) returned a Tx with its error", raw)
			}
		}
	}},
	{"ConcurrentTransactions", func(t *testing.T, f *fixture) {
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[i] = f.store.InTx(f.ctx, func(tx hookd.Tx) error {
					app := hookd.Application{ID: newID("app_"), Name: "concurrent", CreatedAt: at(i), UpdatedAt: at(i)}
					if err := tx.InsertApplication(f.ctx, &app); err != nil {
						return err
					}
					_, err := tx.ListApplications(f.ctx, hookd.ListOptions{})
					return err
				})
			})
		}
		wg.Wait()
		for _, err := range errs {
			f.noErr(err)
		}
		page, err := f.store.ListApplications(f.ctx, hookd.ListOptions{})
		f.noErr(err)
		if len(page.Data) != n {
			t.Fatalf("want %d applications, got %d", n, len(page.Data))
		}
	}},
}
