package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
)

// clientBundle is a started hookd.Client on a store in a schema of its own, with a receiver
// that verifies every request, and one application with one endpoint on the receiver.
type clientBundle struct {
	*bundle
	ctx    context.Context
	client *hookd.Client
	recv   *hookdtest.Receiver
	app    *hookd.Application
	ep     *hookd.Endpoint
}

func setupClient(t *testing.T) *clientBundle {
	t.Helper()
	b := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	recv := hookdtest.NewReceiver()
	t.Cleanup(recv.Close)
	client, err := hookd.NewClient(b.store, &hookd.Config{
		Delivery: &delivery.Config{
			Timeout:      2 * time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
		Logger:        testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	app, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := client.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL("/hooks"), EventTypes: []string{"invoice.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := client.EndpointSecret(ctx, app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := recv.SetSecret("/hooks", secret); err != nil {
		t.Fatal(err)
	}
	return &clientBundle{bundle: b, ctx: ctx, client: client, recv: recv, app: app, ep: ep}
}

// waitDelivered waits until the delivery of msg to the bundle's endpoint is delivered.
func (cb *clientBundle) waitDelivered(t *testing.T, msgID string) *hookd.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := cb.store.GetDeliveryFor(cb.ctx, msgID, cb.ep.ID)
		if err == nil && d.Status == hookd.DeliveryDelivered {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery of %s: %+v, %v; want delivered", msgID, d, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClientDelivers: hookd.NewClient on the store, with the store's own queue, signs and
// delivers a message to a real receiver, retries a failure, and logs the attempts.
func TestClientDelivers(t *testing.T) {
	t.Parallel()
	cb := setupClient(t)
	cb.recv.Handle("/hooks", hookdtest.FailTimes(1, 503, "busy"))
	res, err := cb.client.Send(cb.ctx, "acme", &hookd.MessageIn{
		EventType: "invoice.paid", EventID: "in_1:paid", Channels: []string{"billing"},
		Payload: json.RawMessage(`{"invoice": "in_1",  "amount": 100}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deliveries != 1 || res.Duplicate {
		t.Fatalf("Send: %+v, want one delivery", res)
	}
	d := cb.waitDelivered(t, res.Message.ID)
	if d.Attempts != 2 {
		t.Errorf("delivery made %d attempts, want 2 (one failure, one success)", d.Attempts)
	}
	reqs := cb.recv.Requests("/hooks")
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		if !r.Verified {
			t.Errorf("request not verified: %v", r.VerifyErr)
		}
		if string(r.Body) != `{"invoice": "in_1",  "amount": 100}` {
			t.Errorf("body %q, want the payload byte for byte", r.Body)
		}
		if r.WebhookID != res.Message.ID {
			t.Errorf("webhook-id %q, want %s", r.WebhookID, res.Message.ID)
		}
	}
	attempts, err := cb.client.ListAttempts(cb.ctx, "acme", hookd.AttemptFilter{MessageID: res.Message.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts.Data) != 2 || attempts.Data[0].StatusCode != 200 || attempts.Data[1].StatusCode != 503 {
		t.Errorf("attempt log: %+v, want 200 then 503, newest first", attempts.Data)
	}
	ep, err := cb.store.GetEndpointByID(cb.ctx, cb.ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ep.LastStatus != 200 || ep.ConsecutiveFailures != 0 || ep.LastSuccessAt == nil {
		t.Errorf("endpoint health after a success: %+v", ep)
	}

	// The same event id again: the first message, nothing sent.
	dup, err := cb.client.Send(cb.ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: "in_1:paid", Payload: map[string]any{"x": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !dup.Duplicate || dup.Message.ID != res.Message.ID {
		t.Fatalf("second Send of one event id: %+v", dup)
	}
}

// TestClientSendTx: SendTx in the app's own transaction, of pgx or of database/sql, delivers
// once the app commits, and leaves nothing when it rolls back.
func TestClientSendTx(t *testing.T) {
	t.Parallel()
	cb := setupClient(t)
	ctx := cb.ctx
	if _, err := cb.store.Pool().Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", inSchema(t, cb.url, cb.schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })

	type appTx struct {
		raw    any
		exec   func(q string, args ...any) error
		finish func(commit bool) error
	}
	begins := map[string]func() appTx{
		"pgx": func() appTx {
			tx, err := cb.store.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return appTx{raw: tx,
				exec: func(q string, args ...any) error { _, err := tx.Exec(ctx, q, args...); return err },
				finish: func(commit bool) error {
					if commit {
						return tx.Commit(ctx)
					}
					return tx.Rollback(ctx)
				}}
		},
		"database/sql": func() appTx {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			return appTx{raw: tx,
				exec: func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err },
				finish: func(commit bool) error {
					if commit {
						return tx.Commit()
					}
					return tx.Rollback()
				}}
		},
	}
	for name, begin := range begins {
		for _, commit := range []bool{false, true} {
			order := name + map[bool]string{true: ":committed", false: ":rolled-back"}[commit]
			atx := begin()
			if err := atx.exec(`INSERT INTO orders (id) VALUES ($1)`, order); err != nil {
				t.Fatal(err)
			}
			res, err := cb.client.SendTx(ctx, atx.raw, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: order, Payload: map[string]string{"order": order}})
			if err != nil {
				t.Fatalf("%s: SendTx: %v", order, err)
			}
			if err := atx.finish(commit); err != nil {
				t.Fatal(err)
			}
			if commit {
				cb.waitDelivered(t, res.Message.ID)
				continue
			}
			if _, err := cb.store.GetMessage(ctx, cb.app.ID, order); !errors.Is(err, hookd.ErrNotFound) {
				t.Fatalf("%s: message after rollback: %v, want ErrNotFound", order, err)
			}
		}
	}
	// Only the committed messages reached the receiver, each once.
	reqs := cb.recv.Requests("/hooks")
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2 (the committed sends)", len(reqs))
	}
	for _, r := range reqs {
		if !r.Verified {
			t.Errorf("request not verified: %v", r.VerifyErr)
		}
	}
	var orders int
	if err := cb.store.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM orders`).Scan(&orders); err != nil || orders != 2 {
		t.Fatalf("%d orders (%v), want 2", orders, err)
	}
	// No job is left behind by the rolled-back transactions.
	var jobs int
	if err := cb.store.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM hookd_jobs`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs > 2 {
		t.Errorf("%d jobs, want at most the 2 committed", jobs)
	}
}
