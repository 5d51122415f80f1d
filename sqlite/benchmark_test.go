package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// benchSetup opens a store with one application, endpoints endpoints, and messages messages each
// delivered to every endpoint; it returns the store and the deliveries.
func benchSetup(b *testing.B, endpoints, messages int) (*sqlite.Store, []hookd.Delivery) {
	b.Helper()
	ctx := b.Context()
	s := open(b, filepath.Join(b.TempDir(), "hookd.db"))
	now := time.Now()
	app := hookd.Application{ID: "app_bench", Name: "bench", CreatedAt: now, UpdatedAt: now}
	var eps []hookd.Endpoint
	for i := range endpoints {
		eps = append(eps, hookd.Endpoint{ID: fmt.Sprintf("ep_%04d", i), AppID: app.ID, URL: "https://x.example",
			CreatedAt: now, UpdatedAt: now})
	}
	var ds []hookd.Delivery
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &app); err != nil {
			return err
		}
		for i := range eps {
			if err := tx.InsertEndpoint(ctx, &eps[i], hookd.SigningKey{Secret: "whsec_x", CreatedAt: now}); err != nil {
				return err
			}
		}
		for i := range messages {
			msg := hookd.Message{ID: fmt.Sprintf("msg_%08d", i), AppID: app.ID, EventType: "invoice.paid",
				Payload: []byte(`{"invoice":"in_1","amount":4200}`), CreatedAt: now}
			if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
				return err
			}
			for _, ep := range eps {
				ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_%08d_%s", i, ep.ID), MessageID: msg.ID,
					EndpointID: ep.ID, AppID: app.ID, Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now})
			}
		}
		return tx.InsertDeliveries(ctx, ds)
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, ds
}

// BenchmarkRecordAttempts records a worker's batch: 100 attempts, with their deliveries' state and
// their endpoints' health, in one transaction.
//
//	go test -run '^$' -bench RecordAttempts -benchtime 200x ./sqlite
func BenchmarkRecordAttempts(b *testing.B) {
	const batch = 100
	ctx := b.Context()
	s, ds := benchSetup(b, 10, 100)
	recs := make([]hookd.AttemptRecord, batch)
	next := time.Now().Add(time.Minute)
	n := 0
	for b.Loop() {
		for j := range recs {
			d := ds[n%len(ds)]
			n++
			a := hookd.Attempt{ID: fmt.Sprintf("atmpt_%010d", n), DeliveryID: d.ID, MessageID: d.MessageID,
				EndpointID: d.EndpointID, AppID: d.AppID, Number: n/len(ds) + 1, Trigger: hookd.TriggerScheduled,
				URL: "https://x.example", At: time.Now(), Duration: 12 * time.Millisecond}
			rec := hookd.AttemptRecord{Attempt: a, Status: hookd.DeliveryDelivered}
			if j%4 == 0 {
				rec.Attempt.StatusCode, rec.Attempt.Error, rec.Status, rec.NextAttemptAt = 500, "HTTP 500", hookd.DeliveryPending, &next
			} else {
				rec.Attempt.StatusCode, rec.Attempt.Success, rec.Attempt.Response = 200, true, "ok"
			}
			recs[j] = rec
		}
		if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.RecordAttempts(ctx, recs) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkSend writes what a send writes: one message and a delivery to each of 10 endpoints, in
// one transaction.
//
//	go test -run '^$' -bench Send -benchtime 2000x ./sqlite
func BenchmarkSend(b *testing.B) {
	ctx := b.Context()
	s, _ := benchSetup(b, 10, 0)
	eps, err := s.EnabledEndpoints(ctx, "app_bench")
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"invoice":"in_1","amount":4200}`)
	n := 0
	for b.Loop() {
		n++
		now := time.Now()
		msg := hookd.Message{ID: fmt.Sprintf("msg_%010d", n), AppID: "app_bench", EventID: fmt.Sprintf("order:%d", n),
			EventType: "invoice.paid", Payload: payload, CreatedAt: now}
		ds := make([]hookd.Delivery, len(eps))
		for i, ep := range eps {
			ds[i] = hookd.Delivery{ID: fmt.Sprintf("dlv_%010d_%d", n, i), MessageID: msg.ID, EndpointID: ep.ID,
				AppID: msg.AppID, Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now}
		}
		err := s.InTx(ctx, func(tx hookd.Tx) error {
			if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
				return err
			}
			return tx.InsertDeliveries(ctx, ds)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "sends/s")
}

// BenchmarkLoadWork reads a delivery and its message, as the worker does before each attempt.
func BenchmarkLoadWork(b *testing.B) {
	ctx := b.Context()
	s, ds := benchSetup(b, 10, 100)
	n := 0
	for b.Loop() {
		if _, _, err := s.LoadWork(ctx, ds[n%len(ds)].ID); err != nil {
			b.Fatal(err)
		}
		n++
	}
}
