package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		msg, ds := benchSendRows(n, eps, payload)
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

// BenchmarkSendTx is BenchmarkSend in the app's own transaction, as SendTx writes it: begun on
// DB(), adapted by WrapTx, committed by the app.
//
//	go test -run '^$' -bench 'SendTx$' -benchtime 2000x ./sqlite
func BenchmarkSendTx(b *testing.B) {
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
		msg, ds := benchSendRows(n, eps, payload)
		sqlTx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		tx, err := s.WrapTx(sqlTx)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
			b.Fatal(err)
		}
		if err := tx.InsertDeliveries(ctx, ds); err != nil {
			b.Fatal(err)
		}
		if err := sqlTx.Commit(); err != nil {
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

// BenchmarkSendSteady is a send as Client.Send writes it (one message, a delivery to each of 10
// endpoints and their first jobs, in one transaction) on a file that already holds 50,000
// delivered deliveries, with the deliveries kept up: after every 10 sends, those sends'
// deliveries are recorded delivered and their jobs settled, outside what is measured. It counts
// what a send's commit writes (/proc/self/io's syscw and wchar, taken around the send alone) and
// what the recording and settling writes a send.
//
//	go test -run '^$' -bench SendSteady -benchtime 3000x ./sqlite
func BenchmarkSendSteady(b *testing.B) {
	const endpoints, history = 10, 5000
	ctx := b.Context()
	s, ds := benchSetup(b, endpoints, history)
	q, err := s.NewQueue(nil)
	if err != nil {
		b.Fatal(err)
	}
	deliver := func(ds []hookd.Delivery) {
		recs := make([]hookd.AttemptRecord, len(ds))
		for i, d := range ds {
			recs[i] = hookd.AttemptRecord{Status: hookd.DeliveryDelivered, Attempt: hookd.Attempt{ID: "atmpt_" + d.ID,
				DeliveryID: d.ID, MessageID: d.MessageID, EndpointID: d.EndpointID, AppID: d.AppID, Number: 1,
				Trigger: hookd.TriggerScheduled, URL: "https://x.example", At: time.Now(), StatusCode: 200, Success: true}}
		}
		if err := s.InTx(ctx, func(tx hookd.Tx) error { return tx.RecordAttempts(ctx, recs) }); err != nil {
			b.Fatal(err)
		}
		// The worked jobs' settle: what the queue deletes once their attempts are recorded.
		if _, err := s.DB().ExecContext(ctx, `DELETE FROM hookd_jobs`); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < len(ds); i += 1000 {
		deliver(ds[i:min(i+1000, len(ds))])
	}
	eps, err := s.EnabledEndpoints(ctx, "app_bench")
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"invoice":"in_1","amount":4200}`)
	var sent []hookd.Delivery
	var sending, delivering ioCount
	n := 0
	for b.Loop() {
		n++
		msg, ds := benchSendRows(n, eps, payload)
		jobs := make([]hookd.Job, len(ds))
		for i, d := range ds {
			jobs[i] = hookd.Job{DeliveryID: d.ID, Attempt: 1, Trigger: hookd.TriggerScheduled}
		}
		before := readIO(b)
		err := s.InTx(ctx, func(tx hookd.Tx) error {
			if _, _, err := tx.InsertMessage(ctx, &msg); err != nil {
				return err
			}
			if err := tx.InsertDeliveries(ctx, ds); err != nil {
				return err
			}
			return q.EnqueueTx(ctx, tx, jobs)
		})
		if err != nil {
			b.Fatal(err)
		}
		sending.add(readIO(b), before)
		sent = append(sent, ds...)
		if n%10 == 0 {
			before := readIO(b)
			deliver(sent)
			delivering.add(readIO(b), before)
			sent = sent[:0]
		}
	}
	b.ReportMetric(float64(sending.writes)/float64(n), "send-writes/send")
	b.ReportMetric(float64(sending.bytes)/float64(n), "send-B/send")
	b.ReportMetric(float64(delivering.bytes)/float64(n), "deliver-B/send")
}

// ioCount sums write system calls and the bytes they wrote.
type ioCount struct{ writes, bytes int64 }

func (c *ioCount) add(after, before ioCount) {
	c.writes += after.writes - before.writes
	c.bytes += after.bytes - before.bytes
}

// readIO reads this process's write system calls and bytes written so far (/proc/self/io's syscw
// and wchar).
func readIO(b *testing.B) ioCount {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io:", err)
	}
	var c ioCount
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, _ := strings.Cut(line, ": ")
		v, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "syscw":
			c.writes = v
		case "wchar":
			c.bytes = v
		}
	}
	return c
}

// benchSendRows returns the rows of the n-th message of a send benchmark: the message, and one
// pending delivery of it to each of eps.
func benchSendRows(n int, eps []hookd.Endpoint, payload []byte) (hookd.Message, []hookd.Delivery) {
	now := time.Now()
	msg := hookd.Message{ID: fmt.Sprintf("msg_%010d", n), AppID: "app_bench", EventID: fmt.Sprintf("order:%d", n),
		EventType: "invoice.paid", Payload: payload, CreatedAt: now}
	ds := make([]hookd.Delivery, len(eps))
	for i, ep := range eps {
		ds[i] = hookd.Delivery{ID: fmt.Sprintf("dlv_%010d_%d", n, i), MessageID: msg.ID, EndpointID: ep.ID,
			AppID: msg.AppID, Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	}
	return msg, ds
}
