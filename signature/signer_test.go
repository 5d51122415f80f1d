package signature_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

func TestRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey, otherKey := signature.NewSecret(), signature.NewSecret(), signature.NewSecret()
	now := time.Unix(1700000000, 0)
	body := []byte(`{"a":1}`)

	sig, err := newSigner(t, oldKey, newKey).Sign("msg_1", now, body)
	wantErr(t, err, nil)
	parts := strings.Split(sig, " ")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "v1,") || !strings.HasPrefix(parts[1], "v1,") || parts[0] == parts[1] {
		t.Fatalf("Sign with two keys = %q, want two different v1 signatures", sig)
	}
	// Each signature is the one a single-key signer makes, in key order.
	for i, key := range []string{oldKey, newKey} {
		single, err := newSigner(t, key).Sign("msg_1", now, body)
		wantErr(t, err, nil)
		if parts[i] != single {
			t.Errorf("signature %d = %q, want %q", i, parts[i], single)
		}
	}
	wantErr(t, newVerifier(t, now, oldKey).VerifyParts("msg_1", "1700000000", sig, body), nil)
	wantErr(t, newVerifier(t, now, newKey).VerifyParts("msg_1", "1700000000", sig, body), nil)
	wantErr(t, newVerifier(t, now, otherKey).VerifyParts("msg_1", "1700000000", sig, body), signature.ErrNoMatch)
}

func TestRotationToEd25519(t *testing.T) {
	t.Parallel()
	hmacKey := signature.NewSecret()
	edSecret, edPublic, err := signature.NewKeyPair()
	wantErr(t, err, nil)
	now := time.Unix(1700000000, 0)
	body := []byte(`{"a":1}`)

	sig, err := newSigner(t, hmacKey, edSecret).Sign("msg_1", now, body)
	wantErr(t, err, nil)
	if parts := strings.Fields(sig); len(parts) != 2 || !strings.HasPrefix(parts[0], "v1,") || !strings.HasPrefix(parts[1], "v1a,") {
		t.Fatalf("Sign = %q, want a v1 then a v1a signature", sig)
	}
	for _, key := range []string{hmacKey, edPublic, edSecret} {
		wantErr(t, newVerifier(t, now, key).VerifyParts("msg_1", "1700000000", sig, body), nil)
	}
	_, otherPublic, err := signature.NewKeyPair()
	wantErr(t, err, nil)
	wantErr(t, newVerifier(t, now, otherPublic).VerifyParts("msg_1", "1700000000", sig, body), signature.ErrNoMatch)
}

func TestSignInvalidID(t *testing.T) {
	t.Parallel()
	s := newSigner(t, specSecret)
	for _, id := range []string{"", ".", "msg.1", "msg_1."} {
		_, err := s.Sign(id, time.Unix(specTimestamp, 0), []byte(specBody))
		wantErr(t, err, signature.ErrInvalidID)
		_, err = s.Headers(signature.FlavorWebhook, id, time.Unix(specTimestamp, 0), []byte(specBody))
		wantErr(t, err, signature.ErrInvalidID)
	}
	// Ids from the seeds' bugs are fine: only '.' is reserved.
	for _, id := range []string{"org:42", "order-1", "order:1001-acct:7", "évènement"} {
		_, err := s.Sign(id, time.Unix(specTimestamp, 0), []byte(specBody))
		wantErr(t, err, nil)
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	s := newSigner(t, specSecret)
	ts := time.Unix(specTimestamp, 999_000_000) // the fraction is dropped
	for _, tc := range []struct {
		flavor             signature.Flavor
		id, stamp, sigName string
	}{
		{signature.FlavorWebhook, signature.HeaderID, signature.HeaderTimestamp, signature.HeaderSignature},
		{signature.FlavorSvix, signature.SvixHeaderID, signature.SvixHeaderTimestamp, signature.SvixHeaderSignature},
	} {
		h, err := s.Headers(tc.flavor, specID, ts, []byte(specBody))
		wantErr(t, err, nil)
		if len(h) != 3 || h.Get(tc.id) != specID || h.Get(tc.stamp) != "1614265330" || h.Get(tc.sigName) != specSignature {
			t.Errorf("Headers(%v) = %v", tc.flavor, h)
		}
		wantErr(t, newVerifier(t, ts, specSecret).Verify([]byte(specBody), h), nil)
	}
	if _, err := s.Headers(signature.Flavor(7), specID, ts, []byte(specBody)); err == nil {
		t.Error("Headers with an unknown flavor: no error")
	}
}

func TestFlavor(t *testing.T) {
	t.Parallel()
	for _, f := range []signature.Flavor{signature.FlavorWebhook, signature.FlavorSvix} {
		got, err := signature.ParseFlavor(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFlavor(%q) = %v, %v", f.String(), got, err)
		}
	}
	if signature.FlavorWebhook.String() != "webhook" || signature.FlavorSvix.String() != "svix" {
		t.Errorf("String() = %q, %q", signature.FlavorWebhook, signature.FlavorSvix)
	}
	if got := signature.Flavor(7).String(); got != "Flavor(7)" {
		t.Errorf("Flavor(7).String() = %q", got)
	}
	for _, s := range []string{"", "Webhook", "stripe", "svix "} {
		if _, err := signature.ParseFlavor(s); err == nil {
			t.Errorf("ParseFlavor(%q): no error", s)
		}
	}
	var zero signature.Flavor
	if zero != signature.FlavorWebhook {
		t.Error("the zero Flavor is not FlavorWebhook")
	}
}

// The signers and verifiers reuse scratch buffers across calls; under -race
// this checks that concurrent calls do not share them.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	edSecret, edPublic, err := signature.NewKeyPair()
	wantErr(t, err, nil)
	hmacKey := signature.NewSecret()
	signer := newSigner(t, hmacKey, edSecret)
	now := time.Unix(1700000000, 0)
	verifiers := []*signature.Verifier{newVerifier(t, now, hmacKey), newVerifier(t, now, edPublic)}
	stripeSigner, err := signature.NewStripeSigner(hmacKey)
	wantErr(t, err, nil)
	stripeVerifier, err := signature.NewStripeVerifier(hmacKey)
	wantErr(t, err, nil)
	stripeVerifier.Now = clock(now)

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				body := []byte(strings.Repeat(string(rune('a'+g)), i))
				id := "msg_" + string(rune('a'+g))
				sig, err := signer.Sign(id, now, body)
				if err != nil {
					errs <- err
					return
				}
				for _, v := range verifiers {
					if err := v.VerifyParts(id, "1700000000", sig, body); err != nil {
						errs <- err
						return
					}
					if err := v.VerifyParts(id, "1700000000", sig, append(body, '!')); !errors.Is(err, signature.ErrNoMatch) {
						errs <- errors.Join(errors.New("tampered body"), err)
						return
					}
				}
				if err := stripeVerifier.VerifyHeader(stripeSigner.Sign(now, body), body); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestZeroSigner(t *testing.T) {
	t.Parallel()
	var s signature.Signer
	_, err := s.Sign("msg_1", time.Unix(1700000000, 0), nil)
	wantErr(t, err, signature.ErrInvalidSecret)
	_, err = s.Headers(signature.FlavorSvix, "msg_1", time.Unix(1700000000, 0), nil)
	wantErr(t, err, signature.ErrInvalidSecret)
}
