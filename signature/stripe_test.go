package signature_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

const stripeSecret = "whsec_be28d358628ab90724cae3cf"

func TestStripeSign(t *testing.T) {
	t.Parallel()
	other := "whsec_5f1c0a3e9b7d2468ace13579bdf02468"
	ts := time.Unix(1700000000, 0)
	body := []byte(`{"type":"invitation.created"}`)

	one, err := signature.NewStripeSigner(stripeSecret)
	wantErr(t, err, nil)
	two, err := signature.NewStripeSigner(stripeSecret, other)
	wantErr(t, err, nil)
	sig1, sig2 := one.Sign(ts, body), two.Sign(ts, body)
	if !regexp.MustCompile(`^t=1700000000,v1=[0-9a-f]{64}$`).MatchString(sig1) {
		t.Errorf("Sign = %q", sig1)
	}
	if !regexp.MustCompile(`^t=1700000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`).MatchString(sig2) || !strings.HasPrefix(sig2, sig1+",") {
		t.Errorf("Sign with two secrets = %q, want %q and a second v1", sig2, sig1)
	}

	h := two.Headers("invitation.created", ts, body)
	if len(h) != 4 || h.Get(signature.StripeHeaderSignature) != sig2 || h.Get(signature.StripeHeaderStripe) != sig2 ||
		h.Get(signature.StripeHeaderEvent) != "invitation.created" || h.Get(signature.StripeHeaderTimestamp) != "1700000000" {
		t.Errorf("Headers = %v", h)
	}
	for _, secrets := range [][]string{{stripeSecret}, {other}, {"a third secret, not used"}} {
		v, err := signature.NewStripeVerifier(secrets...)
		wantErr(t, err, nil)
		v.Now = clock(ts)
		want := error(nil)
		if secrets[0] == "a third secret, not used" {
			want = signature.ErrNoMatch
		}
		wantErr(t, v.Verify(body, h), want)
		// A receiver written for Stripe reads Stripe-Signature alone.
		wantErr(t, v.Verify(body, http.Header{"Stripe-Signature": h.Values(signature.StripeHeaderStripe)}), want)
	}
}

func TestStripeVerifyErrors(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1700000000, 0)
	body := []byte(`{"type":"invitation.created"}`)
	s, err := signature.NewStripeSigner(stripeSecret)
	wantErr(t, err, nil)
	good := s.Sign(ts, body)
	v1 := strings.TrimPrefix(good, "t=1700000000,")
	zeros := "v1=" + strings.Repeat("0", 64)

	for _, tc := range []struct {
		name, header string
		tolerance    time.Duration
		want         error
	}{
		{"good", good, 0, nil},
		{"v1 first", v1 + ",t=1700000000", 0, nil},
		{"spaces and empty elements", " t=1700000000 ,, " + v1 + " ,", 0, nil},
		{"upper-case hex", "t=1700000000,v1=" + strings.ToUpper(v1[3:]), 0, nil},
		{"good among others", "t=1700000000," + zeros + "," + v1, 0, nil},
		{"missing", "", 0, signature.ErrMissingHeader},
		{"no t", v1, 0, signature.ErrMalformedHeader},
		{"t twice", "t=1700000000,t=1700000000," + v1, 0, signature.ErrMalformedHeader},
		{"t not a number", "t=now," + v1, 0, signature.ErrMalformedHeader},
		{"t negative", "t=-1," + v1, 0, signature.ErrMalformedHeader},
		{"t empty", "t=," + v1, 0, signature.ErrMalformedHeader},
		{"element without =", "t=1700000000,v1", 0, signature.ErrMalformedHeader},
		{"v1 short", "t=1700000000," + v1[:len(v1)-1], 0, signature.ErrMalformedHeader},
		{"v1 not hex", "t=1700000000,v1=" + strings.Repeat("g", 64), 0, signature.ErrMalformedHeader},
		{"v1 base64", "t=1700000000,v1=g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", 0, signature.ErrMalformedHeader},
		{"more than 32 v1", "t=1700000000" + strings.Repeat(","+zeros, 32) + "," + v1, 0, signature.ErrMalformedHeader},
		{"over 64 KiB", "t=1700000000," + v1 + "," + strings.Repeat("x=y,", 17<<10), 0, signature.ErrMalformedHeader},
		{"malformed before tolerance", "t=1," + v1[:10], 0, signature.ErrMalformedHeader},
		{"too old", "t=1699999000," + v1, 0, signature.ErrTooOld},
		{"too new", "t=1700001000," + v1, 0, signature.ErrTooNew},
		{"tolerance disabled", "t=1," + v1, -1, signature.ErrNoMatch},
		{"only another scheme", "t=1700000000,v0=" + v1[3:], 0, signature.ErrNoMatch},
		{"wrong signature", "t=1700000000," + zeros, 0, signature.ErrNoMatch},
		{"Standard Webhooks header", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", 0, signature.ErrMalformedHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := signature.NewStripeVerifier(stripeSecret)
			wantErr(t, err, nil)
			v.Now = clock(ts)
			v.Tolerance = tc.tolerance
			wantErr(t, v.VerifyHeader(tc.header, body), tc.want)
			h := http.Header{}
			if tc.header != "" {
				h.Set(signature.StripeHeaderSignature, tc.header)
			}
			wantErr(t, v.Verify(body, h), tc.want)
		})
	}
}

func TestStripeToleranceIsPerVerifier(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1700000000, 0)
	s, err := signature.NewStripeSigner(stripeSecret)
	wantErr(t, err, nil)
	header := s.Sign(ts, nil)
	strict, err := signature.NewStripeVerifier(stripeSecret)
	wantErr(t, err, nil)
	lenient, err := signature.NewStripeVerifier(stripeSecret)
	wantErr(t, err, nil)
	strict.Tolerance, lenient.Tolerance = time.Minute, time.Hour
	strict.Now, lenient.Now = clock(ts.Add(-10*time.Minute)), clock(ts.Add(-10*time.Minute))
	wantErr(t, strict.VerifyHeader(header, nil), signature.ErrTooNew)
	wantErr(t, lenient.VerifyHeader(header, nil), nil)
}
