package hookd_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// wireOnly are the headers net/http's transport adds on the wire, after the request's own
// headers are read; an attempt keeps the request's own.
var wireOnly = []string{"Accept-Encoding", "Content-Length"}

// keptAsSent is what an attempt should keep of a request that arrived with h: the headers as
// sent, less the transport's, the values of the endpoint's own headers (own) redacted.
func keptAsSent(h http.Header, own map[string]string) http.Header {
	want := h.Clone()
	for _, k := range wireOnly {
		delete(want, k)
	}
	for k := range own {
		ck := http.CanonicalHeaderKey(k)
		for i := range want[ck] {
			want[ck][i] = hookd.Redacted
		}
	}
	return want
}

// checkDetail compares each attempt of msg to ep, as the dashboard's attempt page reads it
// (Client.GetAttempt), with the request the receiver got at path, in order.
func checkDetail(t *testing.T, b *bundle, path, msg string, ep *hookd.Endpoint, own map[string]string) []hookd.Attempt {
	t.Helper()
	reqs := b.recv.Requests(path)
	listed := b.attempts(t, msg, ep.ID)
	if len(reqs) != len(listed) || len(reqs) == 0 {
		t.Fatalf("%d requests arrived, %d attempts recorded", len(reqs), len(listed))
	}
	var out []hookd.Attempt
	for i, r := range reqs {
		a, err := b.client.GetAttempt(b.ctx, b.app.ID, msg, listed[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := keptAsSent(r.Header, own)
		if !reflect.DeepEqual(a.RequestHeaders.Header, want) || a.RequestHeaders.Omitted != 0 {
			t.Errorf("attempt %d shows request headers\n%v\nwant those that arrived\n%v", i+1, a.RequestHeaders, want)
		}
		if !reflect.DeepEqual(listed[i].RequestHeaders, a.RequestHeaders) {
			t.Errorf("attempt %d lists request headers %v, shows %v", i+1, listed[i].RequestHeaders, a.RequestHeaders)
		}
		out = append(out, *a)
	}
	return out
}

// The attempt detail shows the request headers that arrived at the receiver, whatever the
// scheme and header set, with the endpoint's own headers redacted, and the response's headers
// as the receiver wrote them; retries, which sign again, show their own.
func TestAttemptShowsTheHeadersSent(t *testing.T) {
	t.Parallel()
	own := map[string]string{"x-api-key": "s3cret-credential", "X-Tenant": "t-1"}
	cases := []struct {
		name    string
		headers hookd.SignatureHeaders
		scheme  hookd.SignatureScheme
		sigName string // a signature header the request carries
	}{
		{"standard, both sets", hookd.HeadersBoth, hookd.SchemeStandard, "Svix-Signature"},
		{"standard, webhook-* only", hookd.HeadersWebhook, hookd.SchemeStandard, "Webhook-Signature"},
		{"svix", hookd.HeadersBoth, hookd.SchemeSvix, "Svix-Signature"},
		{"stripe", hookd.HeadersBoth, hookd.SchemeStripe, "Stripe-Signature"},
		{"envelope", hookd.HeadersBoth, hookd.SchemeEnvelope, "X-Webhook-Signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.SignatureHeaders = tc.headers
			b := setup(t, cfg)
			fails := 0
			ep := b.endpoint(t, "/r", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Add("X-Trace", "a")
				w.Header().Add("X-Trace", "b: c")
				if fails < 1 {
					fails++ // one request at a time: the delivery's attempts are in sequence
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				w.Write([]byte(`{"ok":true}`))
			}), &hookd.EndpointIn{Scheme: tc.scheme, Headers: own})
			res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
			b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
			as := checkDetail(t, b, "/r", res.Message.ID, ep, own)
			if len(as) != 2 {
				t.Fatalf("%d attempts; want 2", len(as))
			}
			for _, a := range as {
				if a.RequestHeaders.Header.Get(tc.sigName) == "" {
					t.Errorf("no %s in %v", tc.sigName, a.RequestHeaders.Header)
				}
				resp := a.ResponseHeaders.Header
				if resp.Get("Date") == "" || resp.Get("Content-Type") != "application/json" ||
					!reflect.DeepEqual(resp["X-Trace"], []string{"a", "b: c"}) {
					t.Errorf("attempt %d shows response headers %v", a.Number, resp)
				}
			}
		})
	}
}

// An attempt signed by two keys during a rotation's grace shows both signatures, and still
// shows them once the old key is gone and the endpoint's own headers changed.
func TestAttemptShowsRotatedSignatures(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	own := map[string]string{"Authorization": "Bearer one"}
	ep := b.endpoint(t, "/r", hookdtest.OK(), &hookd.EndpointIn{Headers: own})
	if _, err := b.client.RotateSecretGrace(b.ctx, b.app.ID, ep.ID, "", time.Hour); err != nil {
		t.Fatal(err)
	}
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	before := checkDetail(t, b, "/r", res.Message.ID, ep, own)
	sig := before[0].RequestHeaders.Header.Get("Webhook-Signature")
	if n := len(strings.Fields(sig)); n != 2 {
		t.Fatalf("signature %q has %d values; want 2, one a key", sig, n)
	}
	if _, err := b.client.RotateSecretGrace(b.ctx, b.app.ID, ep.ID, "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.UpdateEndpoint(b.ctx, b.app.ID, ep.ID, &hookd.EndpointIn{URL: ep.URL,
		Headers: map[string]string{"X-Other": "2"}}); err != nil {
		t.Fatal(err)
	}
	after := checkDetail(t, b, "/r", res.Message.ID, ep, own)
	if !reflect.DeepEqual(before[0].RequestHeaders, after[0].RequestHeaders) {
		t.Errorf("after the rotation the attempt shows %v; before, %v", after[0].RequestHeaders, before[0].RequestHeaders)
	}
}
