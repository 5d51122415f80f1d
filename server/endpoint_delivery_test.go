package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/signature"
)

// epVerifies reports whether a request the receiver got verifies with secret, with the Standard
// Webhooks library and with the Svix SDK's own verifier.
func epVerifies(t *testing.T, secret string, body []byte, h http.Header) bool {
	t.Helper()
	sw, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	a, c := sw.Verify(body, h) == nil, sv.Verify(body, h) == nil
	if a != c {
		t.Fatalf("standard-webhooks says %t, svix says %t", a, c)
	}
	return a
}

// epWaitDeliveries polls until the endpoint has n deliveries in status.
func epWaitDeliveries(t *testing.T, b *bundle, app, endpointID string, status hookd.DeliveryStatus, n int) {
	t.Helper()
	for {
		page, err := b.client.ListDeliveries(b.ctx, app, hookd.DeliveryFilter{EndpointID: endpointID, Status: status})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) >= n {
			return
		}
		select {
		case <-b.ctx.Done():
			t.Fatalf("waiting for %d %s deliveries: %v", n, status, b.ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestEndpointSecretRotation(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "rot")
	oldSecret, newSecret := signature.NewSecret(), signature.NewSecret()
	ep, err := b.svix.Endpoint.Create(b.ctx, "rot", &svix.EndpointIn{Url: b.recv.URL("/rot"), Secret: &oldSecret})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svix.Endpoint.GetSecret(b.ctx, "rot", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != oldSecret {
		t.Fatal("GetSecret does not return the secret the endpoint was created with")
	}
	if err := b.svix.Endpoint.RotateSecret(b.ctx, "rot", ep.Id, &svix.EndpointSecretRotateIn{Key: &newSecret}); err != nil {
		t.Fatal(err)
	}
	if got, _ = b.svix.Endpoint.GetSecret(b.ctx, "rot", ep.Id); got.Key != newSecret {
		t.Fatal("GetSecret after rotation is not the new secret")
	}
	// Within the grace period a delivery verifies with the old secret and with the new one.
	if err := b.recv.SetSecret("/rot", oldSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Send(b.ctx, "rot", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	reqs, err := b.recv.Wait(b.ctx, "/rot", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].Verified || !epVerifies(t, oldSecret, reqs[0].Body, reqs[0].Header) || !epVerifies(t, newSecret, reqs[0].Body, reqs[0].Header) {
		t.Fatalf("after rotation: verified %t (%v)", reqs[0].Verified, reqs[0].VerifyErr)
	}

	// gracePeriodSeconds 0 (today's spec; raw HTTP) ends the old secrets at once.
	resp := b.do(t, "POST", "/api/v1/app/rot/endpoint/"+ep.Id+"/secret/rotate", `{"gracePeriodSeconds":0}`)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("rotate: %d", resp.StatusCode)
	}
	third, _ := b.svix.Endpoint.GetSecret(b.ctx, "rot", ep.Id)
	if third.Key == newSecret || third.Key == oldSecret {
		t.Fatal("rotation without a key kept the secret")
	}
	if _, err := b.client.Send(b.ctx, "rot", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 2}}); err != nil {
		t.Fatal(err)
	}
	reqs, err = b.recv.Wait(b.ctx, "/rot", 2)
	if err != nil {
		t.Fatal(err)
	}
	last := reqs[1]
	if !epVerifies(t, third.Key, last.Body, last.Header) || epVerifies(t, newSecret, last.Body, last.Header) || last.Verified {
		t.Fatal("after a rotation with no grace, only the newest secret should verify")
	}
}

func TestEndpointRecoverAndStats(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "rec")
	var healthy atomic.Bool
	b.recv.Handle("/rec", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if healthy.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	start := time.Now()
	ep, err := b.svix.Endpoint.Create(b.ctx, "rec", &svix.EndpointIn{Url: b.recv.URL("/rec")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Send(b.ctx, "rec", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	epWaitDeliveries(t, b, "rec", ep.Id, hookd.DeliveryFailed, 1)
	stats, err := b.svix.Endpoint.GetStats(b.ctx, "rec", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	// Attempts are counted: the first and the two retries of the schedule failed.
	if stats.Fail != 3 || stats.Success != 0 || stats.Pending != 0 {
		t.Fatalf("stats after failure %+v", stats)
	}

	healthy.Store(true)
	out, err := b.svix.Endpoint.Recover(b.ctx, "rec", ep.Id, &svix.RecoverIn{Since: start.Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "running" || out.Task != "endpoint.recover" || out.Id == "" {
		t.Fatalf("recover out %+v", out)
	}
	epWaitDeliveries(t, b, "rec", ep.Id, hookd.DeliveryDelivered, 1)
	stats, err = b.svix.Endpoint.GetStats(b.ctx, "rec", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Success != 1 || stats.Fail != 3 {
		t.Fatalf("stats after recover %+v", stats)
	}

	// Windows: since after the attempts, and until before them, count nothing; around them, all.
	now, earlier := time.Now(), start.Add(-time.Hour)
	for _, opts := range []svix.EndpointStatsOptions{{Since: &now}, {Until: &earlier}} {
		s, err := b.svix.Endpoint.GetStatsWithOptions(b.ctx, "rec", ep.Id, opts)
		if err != nil {
			t.Fatal(err)
		}
		if s.Success+s.Fail+s.Pending != 0 {
			t.Fatalf("stats %+v in an empty window: %+v", opts, s)
		}
	}
	s, err := b.svix.Endpoint.GetStatsWithOptions(b.ctx, "rec", ep.Id, svix.EndpointStatsOptions{Since: &earlier, Until: &now})
	if err != nil {
		t.Fatal(err)
	}
	if s.Success != 1 || s.Fail != 3 {
		t.Fatalf("stats in the window: %+v", s)
	}

	// A recover window that ends before the failure queues nothing; a disabled endpoint is 409.
	resp := b.do(t, "POST", "/api/v1/app/rec/endpoint/"+ep.Id+"/recover",
		`{"since":"2020-01-01T00:00:00Z","until":"2020-01-02T00:00:00Z"}`)
	epReadJSON(t, resp, http.StatusAccepted)
	if _, err := b.client.EditEndpoint(b.ctx, "rec", ep.Id, func(in *hookd.EndpointIn) error { in.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	_, err = b.svix.Endpoint.Recover(b.ctx, "rec", ep.Id, &svix.RecoverIn{Since: start})
	if epSvixStatus(err) != http.StatusConflict {
		t.Fatalf("recover of a disabled endpoint: %v", err)
	}
}

// A message created with the official SDK arrives signed, and verifies with the Svix SDK's own
// verifier and with the Standard Webhooks library.
func TestEndpointSDKMessageDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "sdkmsg")
	epEventTypes(t, b, "invoice.paid")
	ep, err := b.svix.Endpoint.Create(b.ctx, "sdkmsg", &svix.EndpointIn{Url: b.recv.URL("/sdk"), FilterTypes: []string{"invoice.paid"}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := b.svix.Endpoint.GetSecret(b.ctx, "sdkmsg", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.recv.SetSecret("/sdk", secret.Key); err != nil {
		t.Fatal(err)
	}
	msg, err := b.svix.Message.Create(b.ctx, "sdkmsg", &svix.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := b.recv.Wait(b.ctx, "/sdk", 1)
	if err != nil {
		t.Fatal(err)
	}
	r := reqs[0]
	if !r.Verified || r.WebhookID != msg.Id {
		t.Fatalf("verified %t (%v), webhook-id %q, message %q", r.Verified, r.VerifyErr, r.WebhookID, msg.Id)
	}
	wh, err := svix.NewWebhook(secret.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.Body, r.Header); err != nil {
		t.Fatalf("svix verifier: %v", err)
	}
	var payload map[string]any
	if err := json.Unmarshal(r.Body, &payload); err != nil || payload["amount"] != 5.0 {
		t.Fatalf("payload %s", r.Body)
	}
}

func TestEndpointSendExample(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "ex")
	epEventTypes(t, b, "other.type")
	// The endpoint's filter does not match: send-example goes to it anyway, and to it alone.
	ep, err := b.svix.Endpoint.Create(b.ctx, "ex", &svix.EndpointIn{Url: b.recv.URL("/ex"), FilterTypes: []string{"other.type"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svix.Endpoint.Create(b.ctx, "ex", &svix.EndpointIn{Url: b.recv.URL("/ex-other")}); err != nil {
		t.Fatal(err)
	}
	secret, _ := b.svix.Endpoint.GetSecret(b.ctx, "ex", ep.Id)
	if err := b.recv.SetSecret("/ex", secret.Key); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/app/ex/endpoint/" + ep.Id + "/send-example"
	out := epReadJSON(t, b.do(t, "POST", path, `{"eventType":"svix.ping"}`), http.StatusOK)
	if out["eventType"] != "svix.ping" || out["payload"].(map[string]any)["success"] != true || out["timestamp"] == nil {
		t.Fatalf("send-example out %v", out)
	}
	reqs, err := b.recv.Wait(b.ctx, "/ex", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].Verified || string(reqs[0].Body) != `{"success":true}` || reqs[0].WebhookID != out["id"] {
		t.Fatalf("received %s verified %t", reqs[0].Body, reqs[0].Verified)
	}

	// A catalogued event type's example is its payload.
	_, err = b.client.UpsertEventType(b.ctx, &hookd.EventType{
		Name:    "invoice.paid",
		Schemas: json.RawMessage(`{"1":{"type":"object","examples":[{"amount":1}]},"2":{"type":"object","examples":[{"amount":42}]}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	out = epReadJSON(t, b.do(t, "POST", path, `{"eventType":"invoice.paid"}`), http.StatusOK)
	if out["payload"].(map[string]any)["amount"] != 42.0 {
		t.Fatalf("example payload %v", out["payload"])
	}
	// An event type without an example gets a stand-in.
	out = epReadJSON(t, b.do(t, "POST", path, `{"eventType":"no.such"}`), http.StatusOK)
	if out["payload"].(map[string]any)["eventType"] != "no.such" {
		t.Fatalf("stand-in payload %v", out["payload"])
	}
	if _, err := b.recv.Wait(b.ctx, "/ex", 3); err != nil {
		t.Fatal(err)
	}
	if n := len(b.recv.Requests("/ex-other")); n != 0 {
		t.Fatalf("the other endpoint got %d requests", n)
	}
	// A disabled endpoint takes no example.
	if _, err := b.client.EditEndpoint(b.ctx, "ex", ep.Id, func(in *hookd.EndpointIn) error { in.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	epReadJSON(t, b.do(t, "POST", path, `{"eventType":"svix.ping"}`), http.StatusConflict)
}

// Stats count attempts by outcome, as Svix's server does: two messages that fail twice and then
// succeed are 2 successes and 4 failures.
func TestEndpointStatsCountAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "cnt")
	var mu sync.Mutex
	tries := map[string]int{}
	b.recv.Handle("/cnt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		id := r.Header.Get("webhook-id")
		tries[id]++
		if tries[id] <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	ep, err := b.client.CreateEndpoint(b.ctx, "cnt", &hookd.EndpointIn{URL: b.recv.URL("/cnt")})
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		if _, err := b.client.Send(b.ctx, "cnt", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": n}}); err != nil {
			t.Fatal(err)
		}
	}
	epWaitDeliveries(t, b, "cnt", ep.ID, hookd.DeliveryDelivered, 2)
	got := epReadJSON(t, b.do(t, "GET", "/api/v1/app/cnt/endpoint/"+ep.ID+"/stats", ""), http.StatusOK)
	want := map[string]any{"success": 2.0, "fail": 4.0, "pending": 0.0, "sending": 0.0, "canceled": 0.0}
	if !maps.Equal(got, want) {
		t.Fatalf("stats %v, want %v", got, want)
	}
}

// The window is Svix's: until may not be in the future, since at most 28 days (and 5 minutes)
// before until; either is 400 invalid_range.
func TestEndpointStatsWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "win")
	ep, err := b.client.CreateEndpoint(b.ctx, "win", &hookd.EndpointIn{URL: b.recv.URL("/win")})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/app/win/endpoint/" + ep.ID + "/stats"
	until := time.Date(2026, 11, 1, 12, 0, 0, 500_000_000, time.UTC)
	for _, c := range []struct {
		query, detail string
	}{
		{"until=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "'until' cannot be in the future"},
		{"until=" + until.Format(time.RFC3339Nano) + "&since=" + until.Add(-28*24*time.Hour-6*time.Minute).Format(time.RFC3339Nano),
			"'since' cannot be more than 28 days prior to 2026-11-01 12:00:00.500 UTC"},
	} {
		got := epReadJSON(t, b.do(t, "GET", path+"?"+c.query, ""), http.StatusBadRequest)
		if got["code"] != "invalid_range" || got["detail"] != c.detail {
			t.Errorf("%s: %v, want invalid_range %q", c.query, got, c.detail)
		}
	}
	// 28 days and 5 minutes is allowed, and so is since after until (nothing to count).
	for _, q := range []string{
		"until=" + until.Format(time.RFC3339Nano) + "&since=" + until.Add(-28*24*time.Hour-5*time.Minute).Format(time.RFC3339Nano),
		"since=" + time.Now().UTC().Format(time.RFC3339) + "&until=" + until.Format(time.RFC3339Nano),
	} {
		if got := epReadJSON(t, b.do(t, "GET", path+"?"+q, ""), http.StatusOK); got["success"] != 0.0 {
			t.Errorf("%s: %v", q, got)
		}
	}
}

func TestChronoUTC(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("x", 3600))
	for ns, want := range map[int]string{
		0: "2026-01-02 14:04:05 UTC", 123_000_000: "2026-01-02 14:04:05.123 UTC",
		123_456_000: "2026-01-02 14:04:05.123456 UTC", 123_456_789: "2026-01-02 14:04:05.123456789 UTC",
	} {
		if got := chronoUTC(base.Add(time.Duration(ns))); got != want {
			t.Errorf("chronoUTC(+%dns) = %q, want %q", ns, got, want)
		}
	}
}

// An ed25519 endpoint's secret reads as its whpk_ public key, as Svix's server writes it: the
// private key never leaves, and the public key verifies what the endpoint receives.
func TestEndpointSecretOfEd25519IsPublicKey(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "ed")
	private, public, err := signature.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(private)
	ep, err := b.client.CreateEndpoint(b.ctx, "ed", &hookd.EndpointIn{URL: b.recv.URL("/ed"), Secret: private})
	if err != nil {
		t.Fatal(err)
	}
	got := epReadJSON(t, b.do(t, "GET", "/api/v1/app/ed/endpoint/"+ep.ID+"/secret", ""), http.StatusOK)
	if got["key"] != public {
		t.Fatalf("secret %v, want the public key %s", got, public)
	}
	if _, err := b.client.Send(b.ctx, "ed", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	reqs, err := b.recv.Wait(b.ctx, "/ed", 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewVerifier(got["key"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(reqs[0].Body, reqs[0].Header); err != nil {
		t.Fatalf("the public key does not verify the delivery: %v", err)
	}
}
