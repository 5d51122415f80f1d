package signature_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd/signature"
)

// The official library checks timestamps against the real clock, so these
// tests sign at time.Now.

func TestOfficialVerifiesOurSignatures(t *testing.T) {
	t.Parallel()
	secretA, secretB := signature.NewSecret(), signature.NewSecret()
	edSecret, _, err := signature.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"invitation.created","data":{"organizationId":"org:42"}}`)
	for _, tc := range []struct {
		name      string
		secrets   []string
		verifiers []string // the secrets the official library verifies with
	}{
		{"one key", []string{secretA}, []string{secretA}},
		{"rotation", []string{secretA, secretB}, []string{secretA, secretB}},
		{"v1a first, which it skips", []string{edSecret, secretA}, []string{secretA}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := newSigner(t, tc.secrets...).Headers(signature.FlavorWebhook, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", time.Now(), body)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range tc.verifiers {
				wh, err := standardwebhooks.NewWebhook(secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := wh.Verify(body, h); err != nil {
					t.Errorf("official Verify: %v (headers %v)", err, h)
				}
			}
			other, err := standardwebhooks.NewWebhook(signature.NewSecret())
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Verify(body, h); err == nil {
				t.Error("official Verify accepted a signature under another key")
			}
		})
	}
}

func TestWeVerifyOfficialSignatures(t *testing.T) {
	t.Parallel()
	secret := signature.NewSecret()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	body := []byte(`{"type":"contact.created","data":{"id":"1f81eb52"}}`)
	sig, err := wh.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", now, body)
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)

	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set(standardwebhooks.HeaderWebhookTimestamp, ts)
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)

	v, err := signature.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, v.Verify(body, h), nil)
	wantErr(t, v.Verify(body, webhookHeaders(signature.FlavorSvix, "msg_p5jXN8AQM9LWM0D4loKWxJek", ts, sig)), nil)
	wantErr(t, v.Verify(append(body, ' '), h), signature.ErrNoMatch)

	// A Verifier holding another key as well still accepts.
	rotated, err := signature.NewVerifier(signature.NewSecret(), secret)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, rotated.Verify(body, h), nil)
}

// The official library takes the secret without its prefix too; so do we,
// and the key is the same.
func TestOfficialSecretWithoutPrefix(t *testing.T) {
	t.Parallel()
	const bare = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(bare)
	if err != nil {
		t.Fatal(err)
	}
	want, err := wh.Sign(specID, time.Unix(specTimestamp, 0), []byte(specBody))
	if err != nil {
		t.Fatal(err)
	}
	got, err := newSigner(t, bare).Sign(specID, time.Unix(specTimestamp, 0), []byte(specBody))
	wantErr(t, err, nil)
	if got != want || got != specSignature {
		t.Errorf("Sign = %q, official %q, specification %q", got, want, specSignature)
	}
}
