package signature_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

// vector is one entry of testdata/vectors.json, written by
// testdata/vectorgen with code independent of this package.
type vector struct {
	Name          string   `json:"name"`
	Scheme        string   `json:"scheme"`
	Source        string   `json:"source"`
	SignSecrets   []string `json:"sign_secrets"`
	SignError     string   `json:"sign_error"`
	VerifySecrets []string `json:"verify_secrets"`
	ID            string   `json:"id"`
	Timestamp     int64    `json:"timestamp"`
	Now           int64    `json:"now"`
	Body          string   `json:"body"`
	Signature     string   `json:"signature"`
	Error         string   `json:"error"`
}

var sentinels = map[string]error{
	"":                   nil,
	"ErrMissingHeader":   signature.ErrMissingHeader,
	"ErrMalformedHeader": signature.ErrMalformedHeader,
	"ErrTooOld":          signature.ErrTooOld,
	"ErrTooNew":          signature.ErrTooNew,
	"ErrNoMatch":         signature.ErrNoMatch,
	"ErrInvalidSecret":   signature.ErrInvalidSecret,
	"ErrInvalidID":       signature.ErrInvalidID,
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Vectors []vector }
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	return file.Vectors
}

func sentinel(t *testing.T, name string) error {
	t.Helper()
	err, ok := sentinels[name]
	if !ok {
		t.Fatalf("unknown error %q in vectors.json", name)
	}
	return err
}

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			ts, now, body := time.Unix(v.Timestamp, 0), time.Unix(v.Now, 0), []byte(v.Body)
			switch v.Scheme {
			case "standard":
				testStandardVector(t, v, ts, now, body)
			case "stripe":
				testStripeVector(t, v, ts, now, body)
			default:
				t.Fatalf("unknown scheme %q", v.Scheme)
			}
		})
	}
}

func testStandardVector(t *testing.T, v vector, ts, now time.Time, body []byte) {
	if v.SignSecrets != nil {
		got, err := newSigner(t, v.SignSecrets...).Sign(v.ID, ts, body)
		wantErr(t, err, sentinel(t, v.SignError))
		if v.SignError == "" && got != v.Signature {
			t.Errorf("Sign = %q, want %q", got, v.Signature)
		}
	}
	want := sentinel(t, v.Error)
	verifier := newVerifier(t, now, v.VerifySecrets...)
	tsText := strconv.FormatInt(v.Timestamp, 10)
	wantErr(t, verifier.VerifyParts(v.ID, tsText, v.Signature, body), want)
	for _, f := range []signature.Flavor{signature.FlavorWebhook, signature.FlavorSvix} {
		wantErr(t, verifier.Verify(body, webhookHeaders(f, v.ID, tsText, v.Signature)), want)
	}
}

func testStripeVector(t *testing.T, v vector, ts, now time.Time, body []byte) {
	if v.SignSecrets != nil {
		s, err := signature.NewStripeSigner(v.SignSecrets...)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Sign(ts, body); got != v.Signature {
			t.Errorf("Sign = %q, want %q", got, v.Signature)
		}
	}
	verifier, err := signature.NewStripeVerifier(v.VerifySecrets...)
	if err != nil {
		t.Fatal(err)
	}
	verifier.Now = clock(now)
	want := sentinel(t, v.Error)
	wantErr(t, verifier.VerifyHeader(v.Signature, body), want)
	h := http.Header{}
	h.Set(signature.StripeHeaderSignature, v.Signature)
	wantErr(t, verifier.Verify(body, h), want)
}
