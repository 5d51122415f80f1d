package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd/signature"
)

// TestEndpointSchemeCommands sets the signing scheme from the CLI: endpoint add --scheme, endpoint
// get showing it, endpoint scheme changing it, and the delivery signed as it says.
func TestEndpointSchemeCommands(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")

	var ep struct {
		ID     string
		URL    string
		Scheme string
	}
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/stripe"), "--uid", "s", "--scheme", "stripe")
	if ep.ID == "" || ep.Scheme != "stripe" {
		t.Fatalf("endpoint add --scheme stripe --json: %+v", ep)
	}
	if out := b.ok(t, "", "endpoint", "get", "acme", "s"); !strings.Contains(out, "stripe") {
		t.Errorf("endpoint get does not show the scheme:\n%s", out)
	}
	var got struct{ Scheme string }
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "s")
	if got.Scheme != "stripe" {
		t.Errorf("endpoint get --json: scheme %q", got.Scheme)
	}

	// Its delivery carries Stripe-Signature, keyed with the secret the CLI prints.
	secret := strings.TrimSpace(b.ok(t, "", "endpoint", "secret", "acme", "s"))
	b.ok(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", `{"n":1}`)
	reqs, err := b.recv.Wait(b.ctx, "/stripe", 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewStripeVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(reqs[0].Body, http.Header{"Stripe-Signature": reqs[0].Header.Values("Stripe-Signature")}); err != nil {
		t.Errorf("Stripe-Signature: %v", err)
	}

	if out := b.ok(t, "", "endpoint", "scheme", "acme", "s", "standard"); !strings.Contains(out, "standard") {
		t.Errorf("endpoint scheme: %q", out)
	}
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "s")
	if got.Scheme != "standard" {
		t.Errorf("after endpoint scheme standard: %q", got.Scheme)
	}

	// Unknown schemes are usage errors, before any request; the server's refusals are shown.
	for _, args := range [][]string{
		{"endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/x"), "--scheme", "hmac"},
		{"endpoint", "scheme", "acme", "s", "hmac"},
	} {
		r := b.cli(t, "", args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, `unknown scheme "hmac"`) || !strings.Contains(r.stderr, "standard, svix, stripe, envelope") {
			t.Errorf("hookd %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	r := b.cli(t, "", "endpoint", "scheme", "acme", "nope", "svix")
	if r.code != exitFailure || !strings.Contains(r.stderr, "endpoint nope not found in application acme") {
		t.Errorf("endpoint scheme on an unknown endpoint: exit %d, stderr %q", r.code, r.stderr)
	}
}
