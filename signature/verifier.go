package signature

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTolerance is how far a timestamp may be from the verifier's clock, in
// either direction, when the verifier's Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// Bounds on the work one request can cause.
const (
	maxHeaderLen  = 64 << 10 // longer signature headers are refused as malformed
	maxSignatures = 32       // more signatures in one header are refused as malformed
)

var (
	strictBase64 = base64.StdEncoding.Strict()
	v1SigLen     = base64.StdEncoding.EncodedLen(sha256.Size)
	v1aSigLen    = base64.StdEncoding.EncodedLen(ed25519.SignatureSize)
)

// Verifier checks Standard Webhooks signatures, for receivers. Build it with
// NewVerifier; set the fields before its first use. A Verifier is safe for
// concurrent use, and a copy shares the keys of the original.
type Verifier struct {
	// Tolerance is how far the timestamp may be from Now, in either
	// direction; it bounds how long a captured request can be replayed.
	// A negative value disables the timestamp check. Default: DefaultTolerance.
	Tolerance time.Duration
	// Now returns the current time. Default: time.Now.
	Now func() time.Time

	keys *verifyKeys
}

type verifyKeys struct {
	macs [][]byte            // HMAC-SHA256 keys, for v1
	pubs []ed25519.PublicKey // ed25519 keys, for v1a
	pool sync.Pool           // *verifyState
}

// verifyState is the reusable scratch of one verification.
type verifyState struct {
	macs    []hash.Hash // one per verifyKeys.macs
	want    []byte      // the base64 v1 signature of each HMAC key, v1SigLen each
	entries []signatureEntry
	msg     []byte // "id.timestamp." (and the body, for ed25519)
	sum     [sha256.Size]byte
	cand    [88]byte // a candidate signature, v1 base64 or v1a base64
	raw     [66]byte // a decoded v1a signature, with room for DecodedLen
}

// signatureEntry is one "version,signature" of a signature header.
type signatureEntry struct {
	version, sig string
}

// NewVerifier returns a Verifier that accepts a signature made with any of
// the given keys: "whsec_" HMAC secrets (checking v1), "whpk_" ed25519 public
// keys (checking v1a), or "whsk_" ed25519 secret keys (checking v1a with their
// public half). At least one is required. Errors wrap ErrInvalidSecret.
func NewVerifier(secrets ...string) (*Verifier, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: none given, need at least one", ErrInvalidSecret)
	}
	k := &verifyKeys{}
	for i, secret := range secrets {
		switch {
		case strings.HasPrefix(secret, privateKeyPrefix):
			priv, err := parsePrivateKey(secret)
			if err != nil {
				return nil, numbered(err, i, len(secrets))
			}
			k.pubs = append(k.pubs, priv.Public().(ed25519.PublicKey))
		case strings.HasPrefix(secret, publicKeyPrefix):
			pub, err := parsePublicKey(secret)
			if err != nil {
				return nil, numbered(err, i, len(secrets))
			}
			k.pubs = append(k.pubs, pub)
		default:
			key, err := ParseSecret(secret)
			if err != nil {
				return nil, numbered(err, i, len(secrets))
			}
			k.macs = append(k.macs, key)
		}
	}
	k.pool.New = func() any {
		st := &verifyState{
			macs: make([]hash.Hash, len(k.macs)),
			want: make([]byte, len(k.macs)*v1SigLen),
		}
		for i, key := range k.macs {
			st.macs[i] = hmac.New(sha256.New, key)
		}
		return st
	}
	return &Verifier{keys: k}, nil
}

// Verify checks the signature of a request with the body and headers h. It
// reads the webhook-id, webhook-timestamp and webhook-signature headers, or,
// when webhook-id is absent, svix-id, svix-timestamp and svix-signature.
// Pass the body exactly as received: parsing and re-encoding JSON changes it.
// See VerifyParts for the checks and their errors.
func (v *Verifier) Verify(body []byte, h http.Header) error {
	names := webhookNames
	if first(h, names.idKey) == "" && first(h, svixNames.idKey) != "" {
		names = svixNames
	}
	return v.verify(names, first(h, names.idKey), first(h, names.timestampKey), joined(h, names.signatureKey), body)
}

// VerifyParts checks a signature given the values of the three headers. In
// order, it returns an error wrapping
//   - ErrMissingHeader if a value is empty;
//   - ErrMalformedHeader if the id contains '.', the timestamp is not a
//     base-10 integer of Unix seconds, or the signatures are over 64 KiB,
//     more than 32, or none;
//   - ErrTooOld or ErrTooNew if the timestamp is further than the
//     tolerance from the clock;
//   - ErrNoMatch unless one of the space-separated "version,signature"
//     entries matches one of the keys. Versions other than v1 and v1a are
//     skipped.
//
// It returns nil if the signature is good.
func (v *Verifier) VerifyParts(id, timestamp, signatures string, body []byte) error {
	return v.verify(webhookNames, id, timestamp, signatures, body)
}

func (v *Verifier) verify(names headerNames, id, timestamp, signatures string, body []byte) error {
	switch {
	case id == "":
		return fmt.Errorf("%s: %w", names.id, ErrMissingHeader)
	case timestamp == "":
		return fmt.Errorf("%s: %w", names.timestamp, ErrMissingHeader)
	case signatures == "":
		return fmt.Errorf("%s: %w", names.signature, ErrMissingHeader)
	}
	if strings.IndexByte(id, '.') >= 0 {
		return fmt.Errorf("%s: %w: contains '.'", names.id, ErrMalformedHeader)
	}
	unix, err := parseTimestamp(timestamp)
	if err != nil {
		return fmt.Errorf("%s: %w", names.timestamp, err)
	}
	var st *verifyState
	if v.keys != nil {
		st = v.keys.pool.Get().(*verifyState)
		defer v.keys.put(st)
	} else {
		st = &verifyState{} // a zero Verifier: no key will match
	}
	st.entries, err = parseSignatures(st.entries[:0], signatures)
	if err != nil {
		return fmt.Errorf("%s: %w", names.signature, err)
	}
	if err := checkTimestamp(unix, v.Tolerance, v.Now); err != nil {
		return fmt.Errorf("%s: %w", names.timestamp, err)
	}
	if v.keys == nil {
		return fmt.Errorf("%w: the verifier holds no key (build it with NewVerifier)", ErrNoMatch)
	}
	if v.keys.match(st, id, timestamp, body) {
		return nil
	}
	return fmt.Errorf("%s: %w", names.signature, ErrNoMatch)
}

// match reports whether one of the entries in st is a signature of the
// message under one of the keys. Comparisons take constant time.
func (k *verifyKeys) match(st *verifyState, id, timestamp string, body []byte) bool {
	st.msg = append(st.msg[:0], id...)
	st.msg = append(st.msg, '.')
	st.msg = append(st.msg, timestamp...)
	st.msg = append(st.msg, '.')
	prefix := len(st.msg)
	hashed, whole := false, false
	for _, e := range st.entries {
		switch {
		case e.version == "v1" && len(e.sig) == v1SigLen && len(k.macs) > 0:
			if !hashed {
				for i, h := range st.macs {
					h.Reset()
					h.Write(st.msg[:prefix])
					h.Write(body)
					base64.StdEncoding.Encode(st.want[i*v1SigLen:], h.Sum(st.sum[:0]))
				}
				hashed = true
			}
			cand := st.cand[:copy(st.cand[:], e.sig)]
			for i := range st.macs {
				if hmac.Equal(cand, st.want[i*v1SigLen:(i+1)*v1SigLen]) {
					return true
				}
			}
		case e.version == "v1a" && len(e.sig) == v1aSigLen && len(k.pubs) > 0:
			n, err := strictBase64.Decode(st.raw[:], st.cand[:copy(st.cand[:], e.sig)])
			if err != nil || n != ed25519.SignatureSize {
				continue
			}
			if !whole {
				st.msg = append(st.msg, body...)
				whole = true
			}
			for _, pub := range k.pubs {
				if ed25519.Verify(pub, st.msg, st.raw[:n]) {
					return true
				}
			}
		}
	}
	return false
}

func (k *verifyKeys) put(st *verifyState) {
	if cap(st.msg) > maxPooledBuffer {
		st.msg = nil
	}
	clear(st.entries) // drop references to the request's header
	k.pool.Put(st)
}

// parseSignatures appends to dst the entries of a Standard Webhooks signature
// header: space-separated "version,signature" pairs. It skips empty entries
// between repeated spaces; an entry without a comma is kept with an empty
// signature, which matches nothing. It refuses, with ErrMalformedHeader, a
// header over maxHeaderLen bytes, over maxSignatures entries, or with none.
func parseSignatures(dst []signatureEntry, header string) ([]signatureEntry, error) {
	if len(header) > maxHeaderLen {
		return dst, fmt.Errorf("%w: %d bytes, more than the %d a signature header may have",
			ErrMalformedHeader, len(header), maxHeaderLen)
	}
	n := 0
	for header != "" {
		var token string
		token, header, _ = strings.Cut(header, " ")
		if token == "" {
			continue
		}
		if n == maxSignatures {
			return dst, fmt.Errorf("%w: more than %d signatures", ErrMalformedHeader, maxSignatures)
		}
		version, sig, _ := strings.Cut(token, ",")
		dst = append(dst, signatureEntry{version: version, sig: sig})
		n++
	}
	if n == 0 {
		return dst, fmt.Errorf("%w: no signatures", ErrMalformedHeader)
	}
	return dst, nil
}

// parseTimestamp parses Unix seconds written in base 10: digits only, with no
// sign and no leading zero, so that the text is the one a signer wrote.
// Errors wrap ErrMalformedHeader.
func parseTimestamp(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: empty timestamp", ErrMalformedHeader)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: timestamp is not a base-10 integer of Unix seconds", ErrMalformedHeader)
		}
	}
	if s[0] == '0' && len(s) > 1 {
		return 0, fmt.Errorf("%w: timestamp has a leading zero", ErrMalformedHeader)
	}
	unix, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: timestamp out of range", ErrMalformedHeader)
	}
	return unix, nil
}

// checkTimestamp returns ErrTooOld or ErrTooNew if unix is further than
// tolerance from now. A zero tolerance means DefaultTolerance, a negative one
// disables the check, and a nil now means time.Now.
func checkTimestamp(unix int64, tolerance time.Duration, now func() time.Time) error {
	if tolerance < 0 {
		return nil
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	if now == nil {
		now = time.Now
	}
	t, n := time.Unix(unix, 0), now()
	if age := n.Sub(t); age > tolerance {
		return fmt.Errorf("%w: %v old, more than the tolerance of %v", ErrTooOld, age, tolerance)
	}
	if ahead := t.Sub(n); ahead > tolerance {
		return fmt.Errorf("%w: %v ahead of the clock, more than the tolerance of %v", ErrTooNew, ahead, tolerance)
	}
	return nil
}

// first returns the first value of the header with canonical key key.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// joined returns the values of the header with canonical key key, space
// separated: a proxy may split one signature list into several lines.
func joined(h http.Header, key string) string {
	v := h[key]
	switch len(v) {
	case 0:
		return ""
	case 1:
		return v[0]
	}
	return strings.Join(v, " ")
}
