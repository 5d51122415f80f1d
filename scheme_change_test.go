package hookd_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/signature"
)

// stripeVerify checks a Stripe-Signature header as Stripe's libraries do: HMAC-SHA256 keyed with
// the whole secret string, over "<t>.<body>", against any v1= entry.
func stripeVerify(header, secret string, body []byte) bool {
	var t string
	var v1 []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			t = v
		case "v1":
			v1 = append(v1, v)
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(t + "."))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	for _, s := range v1 {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

func TestSchemeChangeChecksTheSecret(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := b.ctx

	// A Stripe-shaped endpoint with a secret of plain text cannot move to Standard Webhooks.
	stripeEP, err := b.client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{
		URL: b.recv.URL("/stripe"), Scheme: hookd.SchemeStripe, Secret: "plain text, not whsec_",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.EditEndpoint(ctx, "acme", stripeEP.ID, func(in *hookd.EndpointIn) error {
		in.Scheme = hookd.SchemeStandard
		return nil
	})
	checkInvalid(t, "stripe to standard with a plain-text secret", err, "scheme")
	if got, _ := b.client.GetEndpoint(ctx, "acme", stripeEP.ID); got.Scheme != hookd.SchemeStripe {
		t.Errorf("scheme after the refused change: %q, want stripe", got.Scheme)
	}
	// Once the secret is rotated to a generated one (the old key stops at once), it can.
	if _, err := b.client.RotateSecretGrace(ctx, "acme", stripeEP.ID, "", 0); err != nil {
		t.Fatal(err)
	}
	got, err := b.client.EditEndpoint(ctx, "acme", stripeEP.ID, func(in *hookd.EndpointIn) error {
		in.Scheme = hookd.SchemeStandard
		return nil
	})
	if err != nil || got.Scheme != hookd.SchemeStandard {
		t.Fatalf("stripe to standard after a rotation: %+v, %v", got, err)
	}

	// An ed25519 endpoint cannot move to the Stripe-shaped scheme, an HMAC, nor be made with one.
	edSecret, _, err := signature.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(edSecret)
	edEP, err := b.client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/ed"), Secret: edSecret})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.UpdateEndpoint(ctx, "acme", edEP.ID, &hookd.EndpointIn{URL: edEP.URL, Scheme: hookd.SchemeEnvelope})
	checkInvalid(t, "whsk_ to envelope", err, "scheme")
	_, err = b.client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/ed2"), Scheme: hookd.SchemeStripe, Secret: edSecret})
	checkInvalid(t, "create stripe with a whsk_ secret", err, "secret")

	// A Standard Webhooks endpoint moves to the Stripe-shaped scheme, and its next delivery carries
	// Stripe-Signature, which verifies as Stripe's libraries verify it, with the whsec_ secret as
	// given.
	ep := b.endpoint(t, "/to-stripe", hookdtest.OK(), nil)
	if _, err := b.client.EditEndpoint(ctx, "acme", ep.ID, func(in *hookd.EndpointIn) error {
		in.Scheme = hookd.SchemeStripe
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	secret, err := b.client.EndpointSecret(ctx, "acme", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	reqs, err := b.recv.Wait(ctx, "/to-stripe", 1)
	if err != nil {
		t.Fatal(err)
	}
	h := reqs[0].Header
	if sig := h.Get("Stripe-Signature"); sig == "" || sig != h.Get("X-Webhook-Signature") || !stripeVerify(sig, secret, reqs[0].Body) {
		t.Errorf("Stripe-Signature %q (X-Webhook-Signature %q) does not verify with the secret as given", sig, h.Get("X-Webhook-Signature"))
	}
	if h.Get("webhook-signature") != "" || h.Get("svix-signature") != "" {
		t.Errorf("a Stripe-shaped delivery carries Standard Webhooks headers: %v", h)
	}
}
