package hookd_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// An attempt keeps the headers it sent, the signature's in full and the endpoint's own header
// redacted, and the headers of the response.
func TestAttemptKeepsItsHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, testConfig())
	b.recv.Handle("/ok", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Receiver", "yes")
		w.WriteHeader(http.StatusOK)
	}))
	ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: b.recv.URL("/ok"),
		Headers: map[string]string{"x-api-key": "s3cret-credential"}})
	if err != nil {
		t.Fatal(err)
	}
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	attempts := b.attempts(t, res.Message.ID, ep.ID)
	if len(attempts) != 1 {
		t.Fatalf("%d attempts; want 1", len(attempts))
	}
	req, resp := attempts[0].RequestHeaders, attempts[0].ResponseHeaders
	if got := req.Header.Get("X-Api-Key"); got != hookd.Redacted {
		t.Errorf("the endpoint's own header is kept as %q; want %q", got, hookd.Redacted)
	}
	if sig := req.Header.Get("Webhook-Signature"); !strings.HasPrefix(sig, "v1,") {
		t.Errorf("the signature is kept as %q; want it in full", sig)
	}
	if got := req.Header.Get("Webhook-Id"); got != res.Message.ID {
		t.Errorf("webhook-id is kept as %q; want %q", got, res.Message.ID)
	}
	if got := resp.Header.Get("X-Receiver"); got != "yes" {
		t.Errorf("the response's header is kept as %q; want yes (all: %v)", got, resp.Header)
	}
	for _, side := range []hookd.AttemptHeaders{req, resp} {
		for k, vs := range side.Header {
			for _, v := range vs {
				if strings.Contains(v, "s3cret") {
					t.Errorf("%s: %q keeps the endpoint's credential", k, v)
				}
			}
		}
	}
}
