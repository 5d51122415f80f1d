package redisqueue_test

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/redisqueue"
)

// TestClientDeliversThroughRedis runs hookd end to end on the Redis queue: a Send to a healthy
// endpoint is delivered once; one to an endpoint that fails twice is retried on the schedule
// (scheduled tasks) and delivered on the third attempt; a SendTx in the app's own transaction is
// left to the sweeper and delivered once. Every request is verified by the official Standard
// Webhooks library.
func TestClientDeliversThroughRedis(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := openStore(t)
	recv := hookdtest.NewReceiver()
	t.Cleanup(recv.Close)
	q := newQueue(t, u, store, nil, &redisqueue.Config{SweepInterval: 100 * time.Millisecond, SweepAfter: 200 * time.Millisecond})
	c, err := hookd.NewClient(store, &hookd.Config{
		Queue: q,
		Delivery: &delivery.Config{
			Timeout:      time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond},
		Logger:        testLogger(t),
	})
	if err != nil {
		t.Fatalf("hookd.NewClient: %v", err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Stop(sctx); err != nil {
			t.Errorf("client Stop: %v", err)
		}
	})

	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatalf("CreateApplication: %v", err)
	}
	endpoint := func(path string, h http.Handler, types ...string) *hookd.Endpoint {
		t.Helper()
		ep, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL(path), EventTypes: types})
		if err != nil {
			t.Fatalf("CreateEndpoint: %v", err)
		}
		if h != nil {
			recv.Handle(path, h)
		}
		secret, err := c.EndpointSecret(ctx, app.ID, ep.ID)
		if err != nil {
			t.Fatalf("EndpointSecret: %v", err)
		}
		if err := recv.SetSecret(path, secret); err != nil {
			t.Fatalf("SetSecret: %v", err)
		}
		return ep
	}
	ok := endpoint("/ok", nil, "invoice.paid")
	flaky := endpoint("/flaky", hookdtest.FailTimes(2, 503, "upstream busy"), "invoice.paid")
	tx := endpoint("/tx", nil, "order.created")

	res, err := c.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"invoice": "in_1"}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if res.Deliveries != 2 {
		t.Fatalf("Send made %d deliveries, want 2", res.Deliveries)
	}

	// In the app's own transaction: no after-commit hook runs, the sweeper enqueues the job.
	sqlTx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	txRes, err := c.SendTx(ctx, sqlTx, "acme", &hookd.MessageIn{EventType: "order.created", Payload: map[string]any{"order": "o_1"}})
	if err != nil {
		_ = sqlTx.Rollback()
		t.Fatalf("SendTx: %v", err)
	}
	if err := sqlTx.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}

	for _, w := range []struct {
		msg  string
		ep   *hookd.Endpoint
		path string
		n    int
	}{
		{res.Message.ID, ok, "/ok", 1},
		{res.Message.ID, flaky, "/flaky", 3},
		{txRes.Message.ID, tx, "/tx", 1},
	} {
		d := waitStatus(t, ctx, store, w.msg, w.ep.ID, hookd.DeliveryDelivered)
		if d.Attempts != w.n {
			t.Errorf("%s: delivered after %d attempts, want %d", w.path, d.Attempts, w.n)
		}
	}
	time.Sleep(settle)
	for _, w := range []struct {
		path, msg string
		n         int
	}{{"/ok", res.Message.ID, 1}, {"/flaky", res.Message.ID, 3}, {"/tx", txRes.Message.ID, 1}} {
		reqs := recv.Requests(w.path)
		if len(reqs) != w.n {
			t.Errorf("%s received %d requests, want %d", w.path, len(reqs), w.n)
		}
		for i, r := range reqs {
			if !r.Verified {
				t.Errorf("%s request %d not verified: %v", w.path, i+1, r.VerifyErr)
			}
			if r.WebhookID != w.msg {
				t.Errorf("%s request %d has webhook-id %q, want the message id %q", w.path, i+1, r.WebhookID, w.msg)
			}
		}
	}
	flakyReqs := recv.Requests("/flaky")
	if len(flakyReqs) == 3 {
		// The schedule is 50 ms, then 100 ms, each spread by up to ±20 %: never sooner.
		for i, least := range []time.Duration{40 * time.Millisecond, 80 * time.Millisecond} {
			if gap := flakyReqs[i+1].At.Sub(flakyReqs[i].At); gap < least {
				t.Errorf("retry %d came %s after the attempt before it, want at least %s", i+1, gap, least)
			}
		}
	}
}

// waitStatus waits until the delivery of msg to ep has status, and returns it.
func waitStatus(t *testing.T, ctx context.Context, r hookd.Reader, msgID, epID string, status hookd.DeliveryStatus) *hookd.Delivery {
	t.Helper()
	for {
		d, err := r.GetDeliveryFor(ctx, msgID, epID)
		if err == nil && d.Status == status {
			return d
		}
		select {
		case <-ctx.Done():
			t.Fatalf("delivery of %s to %s: %+v, %v; want status %s", msgID, epID, d, err, status)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
