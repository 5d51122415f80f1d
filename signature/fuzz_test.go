package signature

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Keys of the fuzz targets: the specification's example secret and the
// RFC 8032 test 1 ed25519 key.
const (
	fuzzSecret   = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	fuzzEdSecret = "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2DXWpgBgrEKt9VL/tPJZAc6DuFy89qmIyWvAhpo9wdRGg=="
	fuzzStripe   = "whsec_be28d358628ab90724cae3cf"
)

func FuzzParseSignatures(f *testing.F) {
	for _, s := range []string{
		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		"v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==",
		"", " ", "v1", "v1,", ",", ",,,", "v1,a,b", "  v2,x  v1,y ", "v1,a\tv1,b", strings.Repeat("a,b ", 40),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		prefix := []signatureEntry{{"kept", "kept"}}
		entries, err := parseSignatures(prefix, header)
		if len(entries) == 0 || entries[0] != prefix[0] {
			t.Fatalf("parseSignatures lost the entries of dst: %q", entries)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("error %v does not wrap ErrMalformedHeader", err)
			}
			return
		}
		entries = entries[1:]
		if len(header) > maxHeaderLen || len(entries) == 0 || len(entries) > maxSignatures {
			t.Fatalf("accepted a header of %d bytes with %d entries", len(header), len(entries))
		}
		var tokens []string
		for _, tok := range strings.Split(header, " ") {
			if tok != "" {
				tokens = append(tokens, tok)
			}
		}
		if len(tokens) != len(entries) {
			t.Fatalf("%d entries from %d tokens", len(entries), len(tokens))
		}
		for i, e := range entries {
			if strings.Contains(e.version, ",") || strings.Contains(e.version+e.sig, " ") {
				t.Fatalf("entry %q", e)
			}
			if tokens[i] != e.version+","+e.sig && (tokens[i] != e.version || e.sig != "") {
				t.Fatalf("entry %q from token %q", e, tokens[i])
			}
		}
	})
}

func FuzzParseStripeHeader(f *testing.F) {
	for _, s := range []string{
		"t=1700000000,v1=a0ff7c8b1a3a0a1f3d5e04c1bd3bc8f0b1b6f2a5f2a0e2c4d3a1b5c6d7e8f901",
		"t=1700000000,v0=00,v1=A0FF7C8B1A3A0A1F3D5E04C1BD3BC8F0B1B6F2A5F2A0E2C4D3A1B5C6D7E8F901",
		"", "t=", "t=1", "t=1,t=2", "v1=", "t=01", "t=-1", "t=1,,", "=", "t=1,x", " t=1 , v1=zz ",
		"t=99999999999999999999", "t=1," + strings.Repeat("v1="+strings.Repeat("0", 64)+",", 33),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		p, err := parseStripeHeader(header, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformedHeader) {
				t.Fatalf("error %v does not wrap ErrMalformedHeader", err)
			}
			return
		}
		if len(header) > maxHeaderLen || len(p.v1) > maxSignatures {
			t.Fatalf("accepted a header of %d bytes with %d signatures", len(header), len(p.v1))
		}
		unix, err := parseTimestamp(p.timestamp)
		if err != nil || unix != p.unix || strconv.FormatInt(unix, 10) != p.timestamp || !strings.Contains(header, "t="+p.timestamp) {
			t.Fatalf("timestamp %q, %d from %q", p.timestamp, p.unix, header)
		}
		for _, sig := range p.v1 {
			if !isHex(sig, stripeSigLen) || !strings.Contains(header, "v1="+sig) {
				t.Fatalf("v1 %q from %q", sig, header)
			}
		}
	})
}

// FuzzVerify feeds arbitrary headers and bodies to the verifiers: they must
// not panic, must fail with one of the sentinels, must accept only a header
// that carries a signature we made, and must accept what we sign.
func FuzzVerify(f *testing.F) {
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte(`{"test": 2432232314}`))
	f.Add("msg_1", "1700000000", "v1a,"+strings.Repeat("A", 86)+"== v1,x", []byte{})
	f.Add("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", "v2,x v1a,fldxM4gAKugP6nnt1hdz3sgGfZ6d99nzrMFnZOELIxbzEHoVmAb2ADpkJK7zgPePmPsle0zV9jSeGlHFG2NVAw==", []byte(`{"test": 2432232314}`))
	f.Add("a.b", "1700000000", "v1,x", []byte("{}"))
	f.Add("", "", "", []byte(nil))
	f.Add("org:42", "01700000000", "t=1700000000,v1="+strings.Repeat("f", 64), []byte("\x00\xff"))
	f.Add("msg_1", "1700000000", "v1,"+strings.Repeat("A", 43)+"= v1a,"+strings.Repeat("/", 88), []byte("x"))
	now := time.Unix(1700000000, 0)
	signer, err := NewSigner(fuzzSecret, fuzzEdSecret)
	if err != nil {
		f.Fatal(err)
	}
	verifier, err := NewVerifier(fuzzSecret, fuzzEdSecret)
	if err != nil {
		f.Fatal(err)
	}
	verifier.Now = func() time.Time { return now }
	verifier.Tolerance = -1 // reach the signature checks for any timestamp
	public, err := PublicKey(fuzzEdSecret)
	if err != nil {
		f.Fatal(err)
	}
	edVerifier, err := NewVerifier(public)
	if err != nil {
		f.Fatal(err)
	}
	edVerifier.Now = verifier.Now
	stripeSigner, err := NewStripeSigner(fuzzStripe)
	if err != nil {
		f.Fatal(err)
	}
	stripeVerifier, err := NewStripeVerifier(fuzzStripe)
	if err != nil {
		f.Fatal(err)
	}
	stripeVerifier.Now = verifier.Now

	f.Fuzz(func(t *testing.T, id, ts, sigs string, body []byte) {
		err := verifier.VerifyParts(id, ts, sigs, body)
		checkSentinel(t, err)
		h := http.Header{webhookNames.idKey: {id}, webhookNames.timestampKey: {ts}, webhookNames.signatureKey: {sigs}}
		if err2 := verifier.Verify(body, h); (err == nil) != (err2 == nil) || !sameSentinel(err, err2) {
			t.Fatalf("VerifyParts: %v; Verify: %v", err, err2)
		}
		if err == nil {
			// Only a genuine signature is accepted.
			unix, _ := parseTimestamp(ts)
			genuine, serr := signer.Sign(id, time.Unix(unix, 0), body)
			if serr != nil || !sharesToken(sigs, genuine) {
				t.Fatalf("accepted %q for id %q, timestamp %q; ours is %q", sigs, id, ts, genuine)
			}
		}
		checkSentinel(t, stripeVerifier.VerifyHeader(sigs, body))

		// What we sign verifies, in both flavors.
		if checkID(id) == nil {
			for _, fl := range []Flavor{FlavorWebhook, FlavorSvix} {
				h, err := signer.Headers(fl, id, now, body)
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range []*Verifier{verifier, edVerifier} {
					if err := v.Verify(body, h); err != nil {
						t.Fatalf("our own %v signature: %v", fl, err)
					}
				}
			}
		}
		if err := stripeVerifier.VerifyHeader(stripeSigner.Sign(now, body), body); err != nil {
			t.Fatalf("our own Stripe signature: %v", err)
		}
	})
}

var verifyErrors = []error{ErrMissingHeader, ErrMalformedHeader, ErrTooOld, ErrTooNew, ErrNoMatch}

func checkSentinel(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range verifyErrors {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %v wraps no sentinel", err)
}

func sameSentinel(a, b error) bool {
	for _, s := range verifyErrors {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

// sharesToken reports whether the space-separated lists a and b have an
// element in common.
func sharesToken(a, b string) bool {
	for _, x := range strings.Split(a, " ") {
		for _, y := range strings.Split(b, " ") {
			if x != "" && x == y {
				return true
			}
		}
	}
	return false
}
