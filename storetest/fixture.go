package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// fixture is one test's store and the helpers that fill it.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	store hookd.Store
}

func newFixture(t *testing.T, newStore func(t *testing.T) hookd.Store) *fixture {
	t.Helper()
	s := newStore(t)
	if s == nil {
		t.Fatal("newStore returned nil")
	}
	return &fixture{t: t, ctx: t.Context(), store: s}
}

// idSeq numbers the ids the suite makes.
var idSeq atomic.Uint64

// base62 digits in ASCII order, as hookd's ids use them.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID returns prefix and 12 base62 digits that sort (bytewise) in the order made, as hookd's own
// ids do. Consecutive ids are 37 apart, so their last digits mix digits, upper and lower case: a
// store that orders text by a case-insensitive collation fails the paging tests.
func newID(prefix string) string {
	n := idSeq.Add(1) * 37
	var buf [12]byte
	for i := len(buf) - 1; i >= 0; i-- {
		buf[i] = base62[n%62]
		n /= 62
	}
	return prefix + string(buf[:])
}

// zone is deliberately not UTC: stores must read times back in UTC.
var zone = time.FixedZone("UTC+1", 3600)

// base has a microsecond part, the precision stores keep.
var base = time.Date(2026, 11, 30, 10, 0, 0, 123456000, zone)

// at returns base plus n seconds.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// write runs fn in a transaction and fails the test on an error.
func (f *fixture) write(fn func(tx hookd.Tx) error) {
	f.t.Helper()
	if err := f.store.InTx(f.ctx, fn); err != nil {
		f.t.Fatalf("transaction: %v", err)
	}
}

// writeErr runs fn in a transaction and returns its error.
func (f *fixture) writeErr(fn func(tx hookd.Tx) error) error {
	return f.store.InTx(f.ctx, fn)
}

// noErr fails the test on err.
func (f *fixture) noErr(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// isErr fails the test unless errors.Is(err, target).
func (f *fixture) isErr(err, target error) {
	f.t.Helper()
	if !errors.Is(err, target) {
		f.t.Fatalf("want an error matching %q (errors.Is), got %v", target, err)
	}
}

// isConflict checks that err is a *hookd.ConflictError naming entity's field and value (and so
// hookd.ErrConflict).
func (f *fixture) isConflict(err error, entity, field, value string) {
	f.t.Helper()
	f.isErr(err, hookd.ErrConflict)
	var ce *hookd.ConflictError
	if !errors.As(err, &ce) {
		f.t.Fatalf("want a *hookd.ConflictError, got %T: %v", err, err)
	}
	if ce.Entity != entity || ce.Field != field || ce.Value != value {
		f.t.Fatalf("conflict names %s %s %q, want %s %s %q (%v)", ce.Entity, ce.Field, ce.Value, entity, field, value, err)
	}
}

func (f *fixture) newApp(mods ...func(*hookd.Application)) hookd.Application {
	f.t.Helper()
	app := hookd.Application{ID: newID("app_"), Name: "Acme", CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&app)
	}
	f.write(func(tx hookd.Tx) error { return tx.InsertApplication(f.ctx, &app) })
	return app
}

func (f *fixture) newEndpoint(appID string, mods ...func(*hookd.Endpoint)) hookd.Endpoint {
	f.t.Helper()
	ep := hookd.Endpoint{
		ID: newID("ep_"), AppID: appID, URL: "https://receiver.example/hooks", Version: 1,
		Scheme: hookd.SchemeStandard, CreatedAt: at(1), UpdatedAt: at(1),
	}
	for _, m := range mods {
		m(&ep)
	}
	key := hookd.SigningKey{Secret: "whsec_" + ep.ID, CreatedAt: ep.CreatedAt}
	f.write(func(tx hookd.Tx) error { return tx.InsertEndpoint(f.ctx, &ep, key) })
	return ep
}

func (f *fixture) newMessage(appID string, mods ...func(*hookd.Message)) hookd.Message {
	f.t.Helper()
	msg := hookd.Message{
		ID: newID("msg_"), AppID: appID, EventType: "invoice.paid",
		Payload: []byte(`{"id":1}`), CreatedAt: at(2),
	}
	for _, m := range mods {
		m(&msg)
	}
	f.write(func(tx hookd.Tx) error {
		existing, inserted, err := tx.InsertMessage(f.ctx, &msg)
		if err == nil && !inserted {
			return fmt.Errorf("message %s not inserted: event id %q taken by %s", msg.ID, msg.EventID, existing.ID)
		}
		return err
	})
	return msg
}

func (f *fixture) newDelivery(msg hookd.Message, endpointID string, mods ...func(*hookd.Delivery)) hookd.Delivery {
	f.t.Helper()
	d := hookd.Delivery{
		ID: newID("dlv_"), MessageID: msg.ID, EndpointID: endpointID, AppID: msg.AppID,
		Status: hookd.DeliveryPending, NextAttemptAt: ptr(msg.CreatedAt), CreatedAt: msg.CreatedAt,
		UpdatedAt: msg.CreatedAt,
	}
	for _, m := range mods {
		m(&d)
	}
	f.write(func(tx hookd.Tx) error { return tx.InsertDeliveries(f.ctx, []hookd.Delivery{d}) })
	return d
}

// attempt returns attempt number n of d, made at when, failed with HTTP 500 (change it with mods).
func attempt(d hookd.Delivery, n int, when time.Time, mods ...func(*hookd.Attempt)) hookd.Attempt {
	a := hookd.Attempt{
		ID: newID("atmpt_"), DeliveryID: d.ID, MessageID: d.MessageID, EndpointID: d.EndpointID,
		AppID: d.AppID, Number: n, Trigger: hookd.TriggerScheduled, URL: "https://receiver.example/hooks",
		At: when, Duration: 1234567 * time.Microsecond, StatusCode: 500, Error: "HTTP 500",
		Response: "internal error",
	}
	for _, m := range mods {
		m(&a)
	}
	return a
}

func succeeded(a *hookd.Attempt) {
	a.StatusCode, a.Success, a.Error, a.Response = 200, true, "", "ok"
}

// record writes attempt records in one transaction.
func (f *fixture) record(recs ...hookd.AttemptRecord) {
	f.t.Helper()
	f.write(func(tx hookd.Tx) error { return tx.RecordAttempts(f.ctx, recs) })
}

func (f *fixture) getApp(idOrUID string) *hookd.Application {
	f.t.Helper()
	app, err := f.store.GetApplication(f.ctx, idOrUID)
	f.noErr(err)
	return app
}

func (f *fixture) getEndpoint(id string) *hookd.Endpoint {
	f.t.Helper()
	ep, err := f.store.GetEndpointByID(f.ctx, id)
	f.noErr(err)
	return ep
}

func (f *fixture) getDelivery(id string) *hookd.Delivery {
	f.t.Helper()
	d, err := f.store.GetDelivery(f.ctx, id)
	f.noErr(err)
	return d
}

// manyIDs returns n ids with prefix that no row has.
func manyIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%snone%07d", prefix, i)
	}
	return ids
}
