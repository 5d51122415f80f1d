package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// minStripeSecretLen is the shortest secret the Stripe-shaped scheme accepts.
const minStripeSecretLen = 16

var stripeSigLen = hex.EncodedLen(sha256.Size)

// StripeSigner signs with the Stripe-shaped scheme of hookd's first design:
//
//	X-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">
//
// with one v1= entry per secret during a rotation.
//
// Unlike the Standard Webhooks scheme, the HMAC key is the secret string's
// bytes exactly as given, not their base64 decoding: for a secret
// "whsec_abc...", the key is all of "whsec_abc...", prefix included. This is
// what Stripe and that first design do, and what a receiver written for them
// computes. A StripeSigner is safe for concurrent use. Build it with
// NewStripeSigner: the zero StripeSigner holds no key and cannot sign.
type StripeSigner struct {
	keys *stripeKeys
}

// StripeVerifier checks signatures of the Stripe-shaped scheme (see
// StripeSigner), for receivers. Build it with NewStripeVerifier; set the
// fields before its first use. A StripeVerifier is safe for concurrent use,
// and a copy shares the keys of the original.
type StripeVerifier struct {
	// Tolerance is how far the signed timestamp may be from Now, in either
	// direction. A negative value disables the timestamp check.
	// Default: DefaultTolerance.
	Tolerance time.Duration
	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	keys *stripeKeys
}

type stripeKeys struct {
	keys [][]byte
	pool sync.Pool // *stripeState
}

// stripeState is the reusable scratch of one Sign or Verify call.
type stripeState struct {
	macs []hash.Hash // one per key
	want []byte      // the HMAC of each key, sha256.Size each
	v1   []string    // the v1 signatures of a header
	msg  []byte      // "<unix>."
	hex  [64]byte
	raw  [sha256.Size]byte
}

// stripeHeader is a parsed X-Webhook-Signature header.
type stripeHeader struct {
	timestamp string   // t=, as written
	unix      int64    // t=, parsed
	v1        []string // the v1= signatures, each 64 hex digits
}

// NewStripeSigner returns a StripeSigner that signs with every secret given.
// Each secret is used as written and must be at least 16 characters long.
// At least one is required. Errors wrap ErrInvalidSecret.
func NewStripeSigner(secrets ...string) (*StripeSigner, error) {
	k, err := newStripeKeys(secrets)
	if err != nil {
		return nil, err
	}
	return &StripeSigner{keys: k}, nil
}

// NewStripeVerifier returns a StripeVerifier that accepts a signature made
// with any of the secrets, each used as written, as NewStripeSigner does.
func NewStripeVerifier(secrets ...string) (*StripeVerifier, error) {
	k, err := newStripeKeys(secrets)
	if err != nil {
		return nil, err
	}
	return &StripeVerifier{keys: k}, nil
}

func newStripeKeys(secrets []string) (*stripeKeys, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: none given, need at least one (%s)", ErrInvalidSecret, howToGenerate)
	}
	k := &stripeKeys{keys: make([][]byte, len(secrets))}
	for i, secret := range secrets {
		if len(secret) < minStripeSecretLen {
			err := fmt.Errorf("%w: %d characters, need at least %d (%s)",
				ErrInvalidSecret, len(secret), minStripeSecretLen, howToGenerate)
			if secret == "" {
				err = fmt.Errorf("%w: empty (%s)", ErrInvalidSecret, howToGenerate)
			}
			return nil, numbered(err, i, len(secrets))
		}
		k.keys[i] = []byte(secret)
	}
	k.pool.New = func() any {
		st := &stripeState{
			macs: make([]hash.Hash, len(k.keys)),
			want: make([]byte, len(k.keys)*sha256.Size),
		}
		for i, key := range k.keys {
			st.macs[i] = hmac.New(sha256.New, key)
		}
		return st
	}
	return k, nil
}

// Sign returns the X-Webhook-Signature header for body sent at ts:
// "t=<unix>,v1=<hex>", with one v1= entry per secret, in the order given.
func (s *StripeSigner) Sign(ts time.Time, body []byte) string {
	st := s.keys.pool.Get().(*stripeState)
	defer s.keys.put(st)
	st.msg = strconv.AppendInt(st.msg[:0], ts.Unix(), 10)
	var b strings.Builder
	b.Grow(len("t=") + len(st.msg) + len(st.macs)*(len(",v1=")+stripeSigLen))
	b.WriteString("t=")
	b.Write(st.msg)
	st.msg = append(st.msg, '.')
	for _, h := range st.macs {
		h.Reset()
		h.Write(st.msg)
		h.Write(body)
		b.WriteString(",v1=")
		b.Write(hex.AppendEncode(st.hex[:0], h.Sum(st.raw[:0])))
	}
	return b.String()
}

// Headers signs like Sign and returns the headers of the scheme:
// X-Webhook-Signature and the same value as Stripe-Signature, X-Webhook-Event
// (eventType) and X-Webhook-Timestamp (the Unix seconds of ts).
func (s *StripeSigner) Headers(eventType string, ts time.Time, body []byte) http.Header {
	v := []string{s.Sign(ts, body), eventType, strconv.FormatInt(ts.Unix(), 10)} // one backing array
	return http.Header{
		stripeSignatureKey: v[0:1:1],
		stripeStripeKey:    v[0:1:1],
		stripeEventKey:     v[1:2:2],
		stripeTimestampKey: v[2:3:3],
	}
}

// Verify checks the X-Webhook-Signature header of a request (Stripe-Signature
// when it has none) against its body, as VerifyHeader does. Pass the body
// exactly as received.
func (v *StripeVerifier) Verify(body []byte, h http.Header) error {
	sig := first(h, stripeSignatureKey)
	if sig == "" {
		sig = first(h, stripeStripeKey)
	}
	return v.VerifyHeader(sig, body)
}

// VerifyHeader checks an X-Webhook-Signature header value against the body.
// In order, it returns an error wrapping
//   - ErrMissingHeader if the header is empty;
//   - ErrMalformedHeader unless it is comma-separated key=value pairs with
//     exactly one t= of base-10 Unix seconds and v1= values of 64 hex digits
//     (other keys are skipped), at most 32 of them and 64 KiB in all;
//   - ErrTooOld or ErrTooNew if t is further than the tolerance from the clock;
//   - ErrNoMatch unless one v1= signature matches one of the secrets.
//
// It returns nil if the signature is good.
func (v *StripeVerifier) VerifyHeader(header string, body []byte) error {
	if header == "" {
		return fmt.Errorf("%s: %w", StripeHeaderSignature, ErrMissingHeader)
	}
	var st *stripeState
	if v.keys != nil {
		st = v.keys.pool.Get().(*stripeState)
		defer v.keys.put(st)
	} else {
		st = &stripeState{} // a zero StripeVerifier: no key will match
	}
	parsed, err := parseStripeHeader(header, st.v1[:0])
	st.v1 = parsed.v1
	if err != nil {
		return fmt.Errorf("%s: %w", StripeHeaderSignature, err)
	}
	if err := checkTimestamp(parsed.unix, v.Tolerance, v.Now); err != nil {
		return fmt.Errorf("%s: %w", StripeHeaderSignature, err)
	}
	if v.keys == nil {
		return fmt.Errorf("%w: the verifier holds no key (build it with NewStripeVerifier)", ErrNoMatch)
	}
	if len(parsed.v1) == 0 {
		return fmt.Errorf("%s: %w: no v1= signature", StripeHeaderSignature, ErrNoMatch)
	}
	st.msg = append(append(st.msg[:0], parsed.timestamp...), '.')
	for i, h := range st.macs {
		h.Reset()
		h.Write(st.msg)
		h.Write(body)
		h.Sum(st.want[i*sha256.Size : i*sha256.Size : (i+1)*sha256.Size])
	}
	for _, sig := range parsed.v1 {
		if _, err := hex.Decode(st.raw[:], st.hex[:copy(st.hex[:], sig)]); err != nil {
			continue // parseStripeHeader checked the digits; this cannot happen
		}
		for i := range st.macs {
			if hmac.Equal(st.raw[:], st.want[i*sha256.Size:(i+1)*sha256.Size]) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: %w", StripeHeaderSignature, ErrNoMatch)
}

func (k *stripeKeys) put(st *stripeState) {
	if cap(st.msg) > maxPooledBuffer {
		st.msg = nil
	}
	clear(st.v1) // drop references to the request's header
	k.pool.Put(st)
}

// parseStripeHeader parses "t=<unix>,v1=<hex>[,v1=<hex>...]", appending the
// v1 signatures to v1. Elements are comma separated, spaces around them are
// ignored, and so are empty elements and keys other than t and v1. It refuses,
// with ErrMalformedHeader, a header over maxHeaderLen bytes, an element
// without '=', a missing or repeated t, a t that is not base-10 Unix seconds,
// a v1 that is not 64 hex digits, and more than maxSignatures v1 entries.
func parseStripeHeader(header string, v1 []string) (stripeHeader, error) {
	p := stripeHeader{v1: v1}
	if len(header) > maxHeaderLen {
		return p, fmt.Errorf("%w: %d bytes, more than the %d a signature header may have",
			ErrMalformedHeader, len(header), maxHeaderLen)
	}
	seenT, n := false, 0
	for header != "" {
		var elem string
		elem, header, _ = strings.Cut(header, ",")
		elem = strings.Trim(elem, " ")
		if elem == "" {
			continue
		}
		key, value, ok := strings.Cut(elem, "=")
		if !ok {
			return p, fmt.Errorf("%w: element %d is not key=value", ErrMalformedHeader, n+1)
		}
		switch key {
		case "t":
			if seenT {
				return p, fmt.Errorf("%w: more than one t=", ErrMalformedHeader)
			}
			unix, err := parseTimestamp(value)
			if err != nil {
				return p, fmt.Errorf("t=: %w", err)
			}
			p.timestamp, p.unix, seenT = value, unix, true
		case "v1":
			if !isHex(value, stripeSigLen) {
				return p, fmt.Errorf("%w: v1= is not %d hex digits", ErrMalformedHeader, stripeSigLen)
			}
			if len(p.v1)-len(v1) == maxSignatures {
				return p, fmt.Errorf("%w: more than %d v1= signatures", ErrMalformedHeader, maxSignatures)
			}
			p.v1 = append(p.v1, value)
		}
		n++
	}
	if !seenT {
		return p, fmt.Errorf("%w: no t= timestamp", ErrMalformedHeader)
	}
	return p, nil
}

// isHex reports whether s is n hex digits, of either case.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
