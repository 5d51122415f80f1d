package signature_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd/signature"
)

// The benchmarks sign and verify a 1 KiB body, the same for ours and the
// official library's.
var (
	benchBody   = bytes.Repeat([]byte(`{"k":"v"},`), 103)[:1024]
	benchTime   = time.Unix(1700000000, 0)
	benchID     = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	benchStripe = "whsec_be28d358628ab90724cae3cf"
)

func benchSign(b *testing.B, secrets ...string) {
	s, err := signature.NewSigner(secrets...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := s.Sign(benchID, benchTime, benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) { benchSign(b, specSecret) }

func BenchmarkSignTwoKeys(b *testing.B) { benchSign(b, specSecret, signature.NewSecret()) }

func BenchmarkSignEd25519(b *testing.B) {
	secret, _, err := signature.NewKeyPair()
	if err != nil {
		b.Fatal(err)
	}
	benchSign(b, secret)
}

func BenchmarkHeaders(b *testing.B) {
	s, err := signature.NewSigner(specSecret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Headers(signature.FlavorWebhook, benchID, benchTime, benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func benchVerify(b *testing.B, signWith, verifyWith string) {
	s, err := signature.NewSigner(signWith)
	if err != nil {
		b.Fatal(err)
	}
	h, err := s.Headers(signature.FlavorWebhook, benchID, benchTime, benchBody)
	if err != nil {
		b.Fatal(err)
	}
	v, err := signature.NewVerifier(verifyWith)
	if err != nil {
		b.Fatal(err)
	}
	v.Now = func() time.Time { return benchTime }
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if err := v.Verify(benchBody, h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) { benchVerify(b, specSecret, specSecret) }

func BenchmarkVerifyEd25519(b *testing.B) {
	secret, public, err := signature.NewKeyPair()
	if err != nil {
		b.Fatal(err)
	}
	benchVerify(b, secret, public)
}

func BenchmarkStripeSign(b *testing.B) {
	s, err := signature.NewStripeSigner(benchStripe)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		_ = s.Sign(benchTime, benchBody)
	}
}

func BenchmarkStripeVerify(b *testing.B) {
	s, err := signature.NewStripeSigner(benchStripe)
	if err != nil {
		b.Fatal(err)
	}
	header := s.Sign(benchTime, benchBody)
	v, err := signature.NewStripeVerifier(benchStripe)
	if err != nil {
		b.Fatal(err)
	}
	v.Now = func() time.Time { return benchTime }
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if err := v.VerifyHeader(header, benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOfficialSign is the baseline for BenchmarkSign: the official
// Standard Webhooks Go library on the same input.
func BenchmarkOfficialSign(b *testing.B) {
	wh, err := standardwebhooks.NewWebhook(specSecret)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := wh.Sign(benchID, benchTime, benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOfficialVerify is the baseline for BenchmarkVerify. The official
// library reads the real clock, so the message is signed now.
func BenchmarkOfficialVerify(b *testing.B) {
	wh, err := standardwebhooks.NewWebhook(specSecret)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	sig, err := wh.Sign(benchID, now, benchBody)
	if err != nil {
		b.Fatal(err)
	}
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, benchID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if err := wh.Verify(benchBody, h); err != nil {
			b.Fatal(err)
		}
	}
}
