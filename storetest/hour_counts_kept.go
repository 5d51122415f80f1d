package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// HourStore is a store that keeps attempt counts by endpoint and hour and deletes old ones (both
// of this module's stores).
type HourStore interface {
	hookd.Store
	DeleteOldEndpointHours(ctx context.Context, before time.Time) (int, error)
}

// HourCountsKeptAndDeleted checks, on an empty s, that recording counts an endpoint's attempts
// by hour as migration 18 counts the attempts already there; that an application's deletion
// deletes its counts and an endpoint's leaves them (its attempts stay too); and that
// DeleteOldEndpointHours deletes the hours that ended at or before its time, and no other. rows
// reads a store's counts, a row a line ("endpoint hour app succeeded failed min_id max_id", hour
// in hours since 1970), by endpoint and hour; recount drops the counts and the record of
// migration 18, opens the store again (which runs it on the attempts), and returns it.
func HourCountsKeptAndDeleted(t *testing.T, s HourStore, rows func(HourStore) []string, recount func() HourStore) {
	t.Helper()
	ctx := t.Context()
	h0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	apps := []hookd.Application{{ID: "app_1", Name: "a", CreatedAt: h0, UpdatedAt: h0}, {ID: "app_2", Name: "b", CreatedAt: h0, UpdatedAt: h0}}
	eps := []hookd.Endpoint{{ID: "ep_1", AppID: "app_1"}, {ID: "ep_2", AppID: "app_1"}, {ID: "ep_3", AppID: "app_2"}}
	var recs []hookd.AttemptRecord
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		for i := range apps {
			if err := tx.InsertApplication(ctx, &apps[i]); err != nil {
				return err
			}
		}
		for i := range eps {
			eps[i].URL, eps[i].CreatedAt, eps[i].UpdatedAt = "https://example.com/", h0, h0
			if err := tx.InsertEndpoint(ctx, &eps[i], hookd.SigningKey{Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", CreatedAt: h0}); err != nil {
				return err
			}
			m := hookd.Message{ID: "msg_" + eps[i].ID, AppID: eps[i].AppID, EventType: "x", Payload: []byte(`{}`), CreatedAt: h0}
			if _, _, err := tx.InsertMessage(ctx, &m); err != nil {
				return err
			}
			d := hookd.Delivery{ID: "dlv_" + eps[i].ID, MessageID: m.ID, EndpointID: eps[i].ID, AppID: m.AppID, Status: hookd.DeliveryPending, CreatedAt: h0, UpdatedAt: h0}
			if err := tx.InsertDeliveries(ctx, []hookd.Delivery{d}); err != nil {
				return err
			}
			for n := range 30 {
				at := h0.Add(time.Duration(n*7+i) * time.Minute)
				recs = append(recs, hookd.AttemptRecord{Status: hookd.DeliveryPending, Attempt: hookd.Attempt{
					ID: fmt.Sprintf("atmpt_%s_%02d", eps[i].ID, n), DeliveryID: d.ID, MessageID: m.ID, EndpointID: d.EndpointID,
					AppID: d.AppID, Number: n + 1, Trigger: hookd.TriggerScheduled, URL: "u", At: at, Success: n%3 == 0}})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// In three batches, the records of an endpoint and hour split across them.
	for _, part := range [][]hookd.AttemptRecord{recs[:25], recs[25:61], recs[61:]} {
		if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.RecordAttempts(ctx, part) }); err != nil {
			t.Fatal(err)
		}
	}
	kept := rows(s)
	if len(kept) != 12 { // 3 endpoints, 4 hours each (30 attempts 7 minutes apart)
		t.Fatalf("%d rows counted, want 12:\n%s", len(kept), strings.Join(kept, "\n"))
	}
	want := fmt.Sprintf("ep_1 %d app_1 3 6 atmpt_ep_1_00 atmpt_ep_1_08", h0.Unix()/3600) // minutes 0..56: attempts 0-8
	if kept[0] != want {
		t.Errorf("first row %q, want %q", kept[0], want)
	}

	// Migration 18 run again on the attempts counts what recording counted.
	s = recount()
	if got := rows(s); !slices.Equal(got, kept) {
		t.Errorf("migration 18 counted\n%s\nrecording counted\n%s", strings.Join(got, "\n"), strings.Join(kept, "\n"))
	}

	if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.DeleteEndpoint(ctx, "ep_2") }); err != nil {
		t.Fatal(err)
	}
	if got := rows(s); !slices.Equal(got, kept) {
		t.Errorf("an endpoint's deletion changed the counts:\n%s", strings.Join(got, "\n"))
	}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.DeleteApplication(ctx, "app_2") }); err != nil {
		t.Fatal(err)
	}
	if got := rows(s); !slices.Equal(got, kept[:8]) {
		t.Errorf("after app_2's deletion:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(kept[:8], "\n"))
	}
	// Hours 0 and 1 ended by h0 + 2h; hour 2 has not ended a microsecond before h0 + 3h.
	n, err := s.DeleteOldEndpointHours(ctx, h0.Add(3*time.Hour-time.Microsecond))
	if err != nil || n != 4 {
		t.Fatalf("DeleteOldEndpointHours = %d, %v; want 4", n, err)
	}
	if got := rows(s); !slices.Equal(got, []string{kept[2], kept[3], kept[6], kept[7]}) {
		t.Errorf("after deleting the hours before h0 + 2h:\n%s", strings.Join(got, "\n"))
	}
}
