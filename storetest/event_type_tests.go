package storetest

import (
	"encoding/json"
	"testing"

	"github.com/hookd/hookd"
)

func (f *fixture) upsertEventType(et hookd.EventType) {
	f.t.Helper()
	f.write(func(tx hookd.Tx) error { return tx.UpsertEventType(f.ctx, &et) })
}

func (f *fixture) getEventType(name string) *hookd.EventType {
	f.t.Helper()
	et, err := f.store.GetEventType(f.ctx, name)
	f.noErr(err)
	return et
}

var eventTypeTests = []test{
	{"ActiveEventTypes", func(t *testing.T, f *fixture) {
		br, ok := f.store.(hookd.EventTypeBatchReader)
		if !ok {
			t.Skip("the store is not a hookd.EventTypeBatchReader")
		}
		for _, name := range []string{"invoice.paid", "invoice.voided", "user:created-ü"} {
			f.upsertEventType(hookd.EventType{Name: name, CreatedAt: at(0), UpdatedAt: at(0)})
		}
		f.write(func(tx hookd.Tx) error { return tx.ArchiveEventType(f.ctx, "invoice.voided", at(1)) })
		got, err := br.ActiveEventTypes(f.ctx, []string{"invoice.paid", "invoice.voided", "user:created-ü", "missing", "invoice.paid"})
		f.noErr(err)
		equal(t, "active", map[string]bool{"invoice.paid": true, "user:created-ü": true}, got)
		got, err = br.ActiveEventTypes(f.ctx, nil)
		f.noErr(err)
		if len(got) != 0 {
			t.Errorf("no name asked for, yet found: %+v", got)
		}
		// More names than SQLite takes parameters in one statement (32,766).
		got, err = br.ActiveEventTypes(f.ctx, append(manyIDs("type.", 40_000), "invoice.paid"))
		f.noErr(err)
		equal(t, "active of 40,001 names", map[string]bool{"invoice.paid": true}, got)
	}},
	{"RoundTrip", func(t *testing.T, f *fixture) {
		full := hookd.EventType{
			Name: "invoice.paid", Description: "An invoice was paid ✓",
			Schemas:      json.RawMessage(`{"1": {"type": "object", "properties": {"id": {"type": "string"}}}}`),
			FeatureFlags: []string{"beta", "billing-v2"}, FeatureFlag: "beta",
			GroupName: "invoice", Deprecated: true, CreatedAt: at(0), UpdatedAt: at(1),
		}
		bare := hookd.EventType{Name: "user:created-ü", CreatedAt: at(2), UpdatedAt: at(2)}
		f.upsertEventType(full)
		f.upsertEventType(bare)
		equal(t, "full", full, *f.getEventType(full.Name))
		equal(t, "bare", bare, *f.getEventType(bare.Name))
		// FeatureFlag alone is the list of one flag; FeatureFlags alone reads back with FeatureFlag
		// its first.
		f.upsertEventType(hookd.EventType{Name: "one.flag", FeatureFlag: "beta", CreatedAt: at(3), UpdatedAt: at(3)})
		equal(t, "one flag", hookd.EventType{Name: "one.flag", FeatureFlag: "beta", FeatureFlags: []string{"beta"},
			CreatedAt: at(3), UpdatedAt: at(3)}, *f.getEventType("one.flag"))
		f.upsertEventType(hookd.EventType{Name: "list.only", FeatureFlags: []string{"b", "a"}, CreatedAt: at(3), UpdatedAt: at(3)})
		equal(t, "flags only", hookd.EventType{Name: "list.only", FeatureFlag: "b", FeatureFlags: []string{"b", "a"},
			CreatedAt: at(3), UpdatedAt: at(3)}, *f.getEventType("list.only"))
		_, err := f.store.GetEventType(f.ctx, "missing")
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"UpsertUpdatesAndUnarchives", func(t *testing.T, f *fixture) {
		et := hookd.EventType{Name: "invoice.paid", Description: "v1", Schemas: json.RawMessage(`{"1":{}}`),
			FeatureFlag: "flag", FeatureFlags: []string{"flag"}, GroupName: "invoice", Deprecated: true,
			CreatedAt: at(0), UpdatedAt: at(0)}
		f.upsertEventType(et)
		f.write(func(tx hookd.Tx) error { return tx.ArchiveEventType(f.ctx, et.Name, at(5)) })
		archived := et
		archived.Archived, archived.UpdatedAt = true, at(5)
		equal(t, "archived", archived, *f.getEventType(et.Name))

		upd := hookd.EventType{Name: et.Name, Description: "v2", CreatedAt: at(10), UpdatedAt: at(10)}
		f.upsertEventType(upd)
		want := upd
		want.CreatedAt = et.CreatedAt // kept
		equal(t, "upserted", want, *f.getEventType(et.Name))

		// Archived is written as given.
		upd.Archived, upd.UpdatedAt = true, at(11)
		f.upsertEventType(upd)
		want.Archived, want.UpdatedAt = true, at(11)
		equal(t, "upserted archived", want, *f.getEventType(et.Name))
	}},
	{"ListArchived", func(t *testing.T, f *fixture) {
		for _, name := range []string{"a.created", "b.created", "c.created"} {
			f.upsertEventType(hookd.EventType{Name: name, CreatedAt: at(0), UpdatedAt: at(0)})
		}
		f.write(func(tx hookd.Tx) error { return tx.ArchiveEventType(f.ctx, "b.created", at(1)) })
		page, err := f.store.ListEventTypes(f.ctx, false, hookd.ListOptions{})
		f.noErr(err)
		equal(t, "without archived", []string{"a.created", "c.created"}, ids(page.Data, eventTypeName))
		page, err = f.store.ListEventTypes(f.ctx, true, hookd.ListOptions{})
		f.noErr(err)
		equal(t, "with archived", []string{"a.created", "b.created", "c.created"}, ids(page.Data, eventTypeName))
	}},
	{"ArchiveAndDelete", func(t *testing.T, f *fixture) {
		f.upsertEventType(hookd.EventType{Name: "x", CreatedAt: at(0), UpdatedAt: at(0)})
		f.write(func(tx hookd.Tx) error { return tx.DeleteEventType(f.ctx, "x") })
		_, err := f.store.GetEventType(f.ctx, "x")
		f.isErr(err, hookd.ErrNotFound)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.DeleteEventType(f.ctx, "x") }), hookd.ErrNotFound)
		f.isErr(f.writeErr(func(tx hookd.Tx) error { return tx.ArchiveEventType(f.ctx, "x", at(1)) }), hookd.ErrNotFound)
	}},
}
