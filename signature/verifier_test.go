package signature_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

func TestVerifierTolerance(t *testing.T) {
	t.Parallel()
	ts := time.Unix(specTimestamp, 0)
	for _, tc := range []struct {
		name      string
		tolerance time.Duration
		now       time.Time
		want      error
	}{
		{"on time", 0, ts, nil},
		{"default, just old enough", 0, ts.Add(signature.DefaultTolerance), nil},
		{"default, a nanosecond too old", 0, ts.Add(signature.DefaultTolerance + 1), signature.ErrTooOld},
		{"default, just new enough", 0, ts.Add(-signature.DefaultTolerance), nil},
		{"default, a nanosecond too new", 0, ts.Add(-signature.DefaultTolerance - 1), signature.ErrTooNew},
		{"one minute, two old", time.Minute, ts.Add(2 * time.Minute), signature.ErrTooOld},
		{"one minute, two ahead", time.Minute, ts.Add(-2 * time.Minute), signature.ErrTooNew},
		{"one hour, two minutes old", time.Hour, ts.Add(2 * time.Minute), nil},
		{"disabled, ten years old", -1, ts.AddDate(10, 0, 0), nil},
		{"disabled, ten years ahead", -1, ts.AddDate(-10, 0, 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := newVerifier(t, tc.now, specSecret)
			v.Tolerance = tc.tolerance
			wantErr(t, v.VerifyParts(specID, "1614265330", specSignature, []byte(specBody)), tc.want)
		})
	}
}

// Two verifiers of the same key, with different tolerances, judge the same
// request differently: the tolerance is per verifier, not global.
func TestToleranceIsPerVerifier(t *testing.T) {
	t.Parallel()
	now := time.Unix(specTimestamp, 0).Add(3 * time.Minute)
	strict := newVerifier(t, now, specSecret)
	strict.Tolerance = time.Minute
	lenient := newVerifier(t, now, specSecret)
	lenient.Tolerance = 10 * time.Minute
	h := webhookHeaders(signature.FlavorWebhook, specID, "1614265330", specSignature)
	wantErr(t, strict.Verify([]byte(specBody), h), signature.ErrTooOld)
	wantErr(t, lenient.Verify([]byte(specBody), h), nil)

	// A copy shares the keys and takes its own tolerance.
	copied := *strict
	copied.Tolerance = -1
	wantErr(t, copied.Verify([]byte(specBody), h), nil)
	wantErr(t, strict.Verify([]byte(specBody), h), signature.ErrTooOld)
}

// Without Now, the verifier reads the real clock: a signature made now
// passes and the specification's example, from 2021, is too old.
func TestVerifierRealClock(t *testing.T) {
	t.Parallel()
	v, err := signature.NewVerifier(specSecret)
	wantErr(t, err, nil)
	wantErr(t, v.VerifyParts(specID, "1614265330", specSignature, []byte(specBody)), signature.ErrTooOld)
	h, err := newSigner(t, specSecret).Headers(signature.FlavorWebhook, specID, time.Now(), []byte(specBody))
	wantErr(t, err, nil)
	wantErr(t, v.Verify([]byte(specBody), h), nil)
}

func TestVerifyPartsErrors(t *testing.T) {
	t.Parallel()
	now := time.Unix(specTimestamp, 0)
	huge := strings.Repeat("v2,"+strings.Repeat("A", 1000)+" ", 70) + specSignature
	many := strings.Repeat("v2,x ", 32) + specSignature
	for _, tc := range []struct {
		name, id, ts, sigs string
		want               error
	}{
		{"good", specID, "1614265330", specSignature, nil},
		{"missing id", "", "1614265330", specSignature, signature.ErrMissingHeader},
		{"missing timestamp", specID, "", specSignature, signature.ErrMissingHeader},
		{"missing signature", specID, "1614265330", "", signature.ErrMissingHeader},
		{"missing before malformed", "a.b", "", specSignature, signature.ErrMissingHeader},
		{"'.' in id", "msg.1", "1614265330", specSignature, signature.ErrMalformedHeader},
		{"'.' in timestamp", specID, "1614265330.5", specSignature, signature.ErrMalformedHeader},
		{"timestamp not a number", specID, "yesterday", specSignature, signature.ErrMalformedHeader},
		{"negative timestamp", specID, "-1614265330", specSignature, signature.ErrMalformedHeader},
		{"signed timestamp", specID, "+1614265330", specSignature, signature.ErrMalformedHeader},
		{"leading zero", specID, "01614265330", specSignature, signature.ErrMalformedHeader},
		{"spaces around timestamp", specID, " 1614265330", specSignature, signature.ErrMalformedHeader},
		{"timestamp overflows int64", specID, "99999999999999999999", specSignature, signature.ErrMalformedHeader},
		{"malformed before tolerance", "a.b", "1", specSignature, signature.ErrMalformedHeader},
		{"signatures only spaces", specID, "1614265330", "   ", signature.ErrMalformedHeader},
		{"signatures over 64 KiB", specID, "1614265330", huge, signature.ErrMalformedHeader},
		{"more than 32 signatures", specID, "1614265330", many, signature.ErrMalformedHeader},
		{"32 signatures", specID, "1614265330", strings.Repeat("v2,x ", 31) + specSignature, nil},
		{"extra spaces", specID, "1614265330", "  v2,x   " + specSignature + "  ", nil},
		{"too old", specID, "1614264000", specSignature, signature.ErrTooOld},
		{"too new", specID, "1614267000", specSignature, signature.ErrTooNew},
		{"no comma", specID, "1614265330", "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", signature.ErrNoMatch},
		{"v1 in upper case", specID, "1614265330", "V1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", signature.ErrNoMatch},
		{"truncated", specID, "1614265330", specSignature[:len(specSignature)-1], signature.ErrNoMatch},
		{"without padding", specID, "1614265330", strings.TrimSuffix(specSignature, "="), signature.ErrNoMatch},
		{"v1a of the wrong length", specID, "1614265330", "v1a,AAAA", signature.ErrNoMatch},
		{"v1a not base64", specID, "1614265330", "v1a," + strings.Repeat("!", 88), signature.ErrNoMatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			edSecret, _, err := signature.NewKeyPair()
			wantErr(t, err, nil)
			v := newVerifier(t, now, specSecret, edSecret)
			wantErr(t, v.VerifyParts(tc.id, tc.ts, tc.sigs, []byte(specBody)), tc.want)
		})
	}
}

func TestVerifyHeaderNames(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, time.Unix(specTimestamp, 0), specSecret)
	body := []byte(specBody)
	good := webhookHeaders(signature.FlavorWebhook, specID, "1614265330", specSignature)
	svix := webhookHeaders(signature.FlavorSvix, specID, "1614265330", specSignature)

	wantErr(t, v.Verify(body, good), nil)
	wantErr(t, v.Verify(body, svix), nil)
	wantErr(t, v.Verify(body, http.Header{}), signature.ErrMissingHeader)
	wantErr(t, v.Verify(body, nil), signature.ErrMissingHeader)

	// webhook-* wins when both are present.
	both := svix.Clone()
	for k, vs := range webhookHeaders(signature.FlavorWebhook, specID, "1614265330", "v1,AAAA") {
		both[k] = vs
	}
	wantErr(t, v.Verify(body, both), signature.ErrNoMatch)

	// No mixing: webhook-id selects the webhook-* names.
	mixed := svix.Clone()
	mixed.Set(signature.HeaderID, specID)
	wantErr(t, v.Verify(body, mixed), signature.ErrMissingHeader)

	// A signature list split over several header lines is read whole.
	split := good.Clone()
	split.Set(signature.HeaderSignature, "v1,AAAA")
	split.Add(signature.HeaderSignature, specSignature)
	wantErr(t, v.Verify(body, split), nil)

	// Header names are matched in any case, as HTTP does.
	raw := http.Header{}
	raw.Set("WEBHOOK-ID", specID)
	raw.Set("Webhook-Timestamp", "1614265330")
	raw.Set("webhook-signature", specSignature)
	wantErr(t, v.Verify(body, raw), nil)
}

// A zero Verifier, made without NewVerifier, holds no key: it refuses every
// request and does not panic.
func TestZeroVerifier(t *testing.T) {
	t.Parallel()
	var v signature.Verifier
	v.Now = clock(time.Unix(specTimestamp, 0))
	wantErr(t, v.VerifyParts(specID, "1614265330", specSignature, []byte(specBody)), signature.ErrNoMatch)
	wantErr(t, v.VerifyParts(specID, "1614265330", "", []byte(specBody)), signature.ErrMissingHeader)
	var s signature.StripeVerifier
	s.Now = clock(time.Unix(1700000000, 0))
	wantErr(t, s.VerifyHeader("t=1700000000,v1="+strings.Repeat("0", 64), nil), signature.ErrNoMatch)
}
