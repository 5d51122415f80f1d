package bus_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/signature"
	"github.com/hookd/hookd/sqlite"
)

// fanout is a hookd client and a bus on one SQLite file, with the webhook fan-out subscribed, and
// a verifying receiver.
type fanout struct {
	store    *sqlite.Store
	client   *hookd.Client
	bus      *bus.Bus
	recv     *hookdtest.Receiver
	webhooks *bus.Webhooks
	busLog   *logcheck.Log // the bus's
}

func newFanout(t *testing.T) *fanout { return newFanoutWith(t, nil) }

// newFanoutWith is newFanout with the fan-out's options.
func newFanoutWith(t *testing.T, opts *bus.WebhookOptions) *fanout {
	t.Helper()
	ctx := context.Background()
	log := logcheck.New(t) // the store's and the client's
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	t.Cleanup(func() {
		recv.Close()
		s.Close()
	})
	log.SecretsAtCleanup(t, s) // after the client's Stop, before the store closes
	c, err := hookd.NewClient(s, &hookd.Config{Logger: log.Logger(), Delivery: &delivery.Config{
		Timeout: time.Second, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Stop(ctx)
	})
	busLog := logcheck.New(t)
	b := newBus(t, s, &bus.Config{PollInterval: 20 * time.Millisecond, Logger: busLog.Logger()})
	w := bus.SubscribeWebhooks(b, c, bus.EventMap{
		"tenancy.invitation.created":   "invitation.created",
		"billing.subscription.updated": "subscription.updated",
		"iam.user.registered":          "user.registered",
	}, opts)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return &fanout{store: s, client: c, bus: b, recv: recv, webhooks: w, busLog: busLog}
}

// customer creates the application of an organization with one endpoint at path.
func (f *fanout) customer(t *testing.T, org, path string, scheme hookd.SignatureScheme) string {
	t.Helper()
	ctx := context.Background()
	app, err := f.client.CreateApplication(ctx, &hookd.ApplicationIn{Name: org, UID: org})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := f.client.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: f.recv.URL(path), Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := f.client.EndpointSecret(ctx, app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if scheme == hookd.SchemeStandard {
		if err := f.recv.SetSecret(path, secret); err != nil {
			t.Fatal(err)
		}
	}
	return secret
}

func (f *fanout) publish(t *testing.T, evs ...bus.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := f.store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.bus.Publish(ctx, tx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A mapped event becomes a verified webhook of its public type to the organization's application;
// an event without an organization, and one for an organization hookd does not know, are skipped,
// not failed.
func TestWebhookFanout(t *testing.T) {
	f := newFanout(t)
	f.customer(t, "org_acme", "/acme", hookd.SchemeStandard)
	f.publish(t,
		bus.Event{Name: "iam.user.registered", Payload: map[string]string{"userId": "u_1"}},
		bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"organizationId": "org_unknown", "email": "x@y"}},
		bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"organizationId": "org_acme", "email": "a@acme.test"}},
		bus.Event{Name: "billing.subscription.updated", Payload: map[string]any{"orgId": "org_acme", "seats": 5}},
		bus.Event{Name: "tenancy.not.mapped", Payload: map[string]string{"organizationId": "org_acme"}},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := f.recv.Wait(ctx, "/acme", 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range reqs {
		if !r.Verified {
			t.Errorf("unverified webhook: %v", r.VerifyErr)
		}
		var m hookd.Message
		msgs, err := f.client.ListMessages(ctx, "org_acme", hookd.MessageFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m = range msgs.Data {
			if m.ID == r.WebhookID {
				got[m.EventType] = string(r.Body)
			}
		}
	}
	if got["invitation.created"] != `{"email":"a@acme.test","organizationId":"org_acme"}` ||
		got["subscription.updated"] != `{"orgId":"org_acme","seats":5}` {
		t.Errorf("webhooks by type: %v", got)
	}
	// Nothing failed: the skipped events were settled, not left to retry.
	time.Sleep(100 * time.Millisecond)
	if err := f.bus.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	due, err := f.store.DueEvents(ctx, time.Now().Add(24*time.Hour), 10)
	if err != nil || len(due) != 0 {
		t.Errorf("events left after the fan-out: %+v, %v", due, err)
	}
	if n := len(f.recv.Requests("")); n != 2 {
		t.Errorf("%d webhooks in all, want 2", n)
	}
	if got, want := f.webhooks.Counts(), (bus.WebhookCounts{Sent: 2, NoApplication: 1, UnknownApplication: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// An ApplicationFunc routes events by what the app says; what it cannot route, and what hookd
// refuses, is counted, and each event name is logged once for each cause, not once an event.
func TestWebhookFanoutApplicationFunc(t *testing.T) {
	f := newFanoutWith(t, &bus.WebhookOptions{ApplicationFunc: func(_ context.Context, d *bus.Dispatch) (string, error) {
		var p struct {
			Tenant string `json:"tenant"`
		}
		if json.Unmarshal(d.Payload, &p) != nil || p.Tenant == "" {
			if d.Name == "billing.subscription.updated" {
				return "acme-billing", nil // every subscription event goes to one application
			}
			return "", nil
		}
		return "tenant-" + p.Tenant, nil
	}})
	f.customer(t, "tenant-acme", "/acme", hookd.SchemeStandard)
	var evs []bus.Event
	for range 3 {
		evs = append(evs,
			bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"organizationId": "org_acme"}}, // no tenant
			bus.Event{Name: "iam.user.registered", Payload: map[string]string{"tenant": "globex"}},                  // unknown
		)
	}
	evs = append(evs,
		bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"tenant": "acme", "email": "a@acme.test"}},
		bus.Event{Name: "billing.subscription.updated", Payload: []int{1, 2}}, // not an object
	)
	f.publish(t, evs...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.recv.Wait(ctx, "/acme", 1); err != nil {
		t.Fatal(err)
	}
	want := bus.WebhookCounts{Sent: 1, NoApplication: 3, UnknownApplication: 3, Refused: 1}
	for f.webhooks.Counts() != want && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.webhooks.Counts(); got != want || got.Skipped() != 7 {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	logs := f.busLog.String()
	for _, line := range []string{
		`cause="no application" name=tenancy.invitation.created`,
		`cause="unknown application" name=iam.user.registered type=user.registered`,
		`cause="refused by hookd" name=billing.subscription.updated`,
	} {
		if n := strings.Count(logs, line); n != 1 {
			t.Errorf("%d lines with %s, want 1; logs:\n%s", n, line, logs)
		}
	}
	if n := strings.Count(logs, "webhook skipped"); n != 3 {
		t.Errorf("%d skip lines for 7 skips of 3 names and causes, want 3:\n%s", n, logs)
	}
}

// An error from ApplicationFunc fails the attempt: the event waits for its retry.
func TestWebhookFanoutApplicationFuncError(t *testing.T) {
	var calls atomic.Int64
	f := newFanoutWith(t, &bus.WebhookOptions{ApplicationFunc: func(context.Context, *bus.Dispatch) (string, error) {
		calls.Add(1)
		return "", context.DeadlineExceeded
	}})
	f.publish(t, bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"tenant": "acme"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for calls.Load() == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	var due []bus.Record
	for ctx.Err() == nil {
		var err error
		if due, err = f.store.DueEvents(ctx, time.Now().Add(time.Hour), 10); err != nil {
			t.Fatal(err)
		}
		if len(due) == 1 && due[0].LastError != "" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(due) != 1 || due[0].Attempts != 1 || !strings.Contains(due[0].LastError, "deadline") || f.webhooks.Counts() != (bus.WebhookCounts{}) {
		t.Fatalf("due %+v, counts %+v; want the event failed once, waiting for its retry, nothing counted", due, f.webhooks.Counts())
	}
}

// An event dispatched twice (its first attempt failed in another handler) sends one webhook: the
// message's event id is the event's.
func TestWebhookFanoutOnceAcrossRetries(t *testing.T) {
	f := newFanout(t)
	f.customer(t, "org_acme", "/acme", hookd.SchemeStandard)
	var failed atomic.Bool
	f.bus.Subscribe("tenancy.invitation.created", func(ctx context.Context, d *bus.Dispatch) error {
		if failed.CompareAndSwap(false, true) {
			return context.DeadlineExceeded
		}
		return nil
	})
	f.publish(t, bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"organizationId": "org_acme"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.recv.Wait(ctx, "/acme", 1); err != nil {
		t.Fatal(err)
	}
	due, err := f.store.DueEvents(ctx, time.Now().Add(time.Hour), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due: %v, %v; want the event waiting for its retry", due, err)
	}
	if err := f.store.RedriveEvent(ctx, due[0].ID, time.Now()); err == nil {
		t.Fatal("RedriveEvent of a pending event: nil error, want ErrNotFound")
	}
	// Run the retry now rather than in 30 s: make it due.
	if _, err := f.store.DB().ExecContext(ctx, `UPDATE hookd_events SET next_attempt_at = 0`); err != nil {
		t.Fatal(err)
	}
	if err := f.bus.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(f.recv.Requests("/acme")); n != 1 {
		t.Errorf("%d webhooks for one event dispatched twice, want 1", n)
	}
}

// An endpoint with the envelope scheme gets the envelope {"id", "type", "occurredAt", "data"},
// the event's id its id and the public type its type, with the Stripe-shaped headers.
func TestWebhookEnvelopeScheme(t *testing.T) {
	f := newFanout(t)
	secret := f.customer(t, "org_acme", "/env", hookd.SchemeEnvelope)
	f.publish(t, bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"organizationId": "org_acme", "email": "a@b"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reqs, err := f.recv.Wait(ctx, "/env", 1)
	if err != nil {
		t.Fatal(err)
	}
	r := reqs[0]
	v, err := signature.NewStripeVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(r.Body, r.Header); err != nil {
		t.Errorf("X-Webhook-Signature: %v", err)
	}
	if got := r.Header.Get("X-Webhook-Event"); got != "invitation.created" {
		t.Errorf("X-Webhook-Event %q", got)
	}
	var env struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		OccurredAt string          `json:"occurredAt"`
		Data       json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if _, err := time.Parse(time.RFC3339, env.OccurredAt); err != nil || env.Type != "invitation.created" ||
		len(env.ID) < 5 || env.ID[:4] != "evt_" || string(env.Data) != `{"email":"a@b","organizationId":"org_acme"}` {
		t.Errorf("envelope %s", r.Body)
	}
}
