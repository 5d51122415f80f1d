package signature_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

// Fixed inputs shared by the tests: the Standard Webhooks specification's
// example.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// wantErr fails the test unless err is nil when want is, and wraps want
// otherwise.
func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want one wrapping %v", err, want)
	}
}

// clock returns a Now function stopped at t.
func clock(t time.Time) func() time.Time {
	return func() time.Time { return t }
}

// newVerifier returns a Verifier for secrets with its clock stopped at now.
func newVerifier(t *testing.T, now time.Time, secrets ...string) *signature.Verifier {
	t.Helper()
	v, err := signature.NewVerifier(secrets...)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	v.Now = clock(now)
	return v
}

func newSigner(t *testing.T, secrets ...string) *signature.Signer {
	t.Helper()
	s, err := signature.NewSigner(secrets...)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	return s
}

// webhookHeaders returns the three Standard Webhooks headers under the names
// of flavor f.
func webhookHeaders(f signature.Flavor, id, ts, sig string) http.Header {
	h := http.Header{}
	switch f {
	case signature.FlavorSvix:
		h.Set(signature.SvixHeaderID, id)
		h.Set(signature.SvixHeaderTimestamp, ts)
		h.Set(signature.SvixHeaderSignature, sig)
	default:
		h.Set(signature.HeaderID, id)
		h.Set(signature.HeaderTimestamp, ts)
		h.Set(signature.HeaderSignature, sig)
	}
	return h
}
