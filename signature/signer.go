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

// Lengths of one signature in a Standard Webhooks header.
var (
	v1Len  = len("v1,") + base64.StdEncoding.EncodedLen(sha256.Size)
	v1aLen = len("v1a,") + base64.StdEncoding.EncodedLen(ed25519.SignatureSize)
)

// maxPooledBuffer caps the message buffer kept for reuse, so one large body
// does not pin its size in memory.
const maxPooledBuffer = 64 << 10

// Signer signs messages with the Standard Webhooks scheme. It signs with every
// key it holds, in the order given, so that during a rotation the header
// carries one signature per key, space separated, and receivers holding either
// the old or the new key accept it. A Signer is safe for concurrent use.
// Build it with NewSigner: the zero Signer holds no key and refuses to sign.
type Signer struct {
	keys      []signingKey
	size      int  // length of the header Sign returns
	needsBody bool // an ed25519 key needs the whole message in one buffer
	pool      sync.Pool
}

type signingKey struct {
	mac  []byte             // HMAC-SHA256 key for v1, or nil
	priv ed25519.PrivateKey // ed25519 key for v1a, or nil
}

// signState is the reusable scratch of one Sign call.
type signState struct {
	macs []hash.Hash // index-aligned with Signer.keys; nil for ed25519 keys
	msg  []byte      // "id.timestamp." (and the body, for ed25519)
	sum  [sha256.Size]byte
	enc  [88]byte // base64 of an ed25519 signature, the longest we write
}

// NewSigner returns a Signer for the given secrets: each either a "whsec_"
// HMAC secret (signing v1) or a "whsk_" ed25519 key (signing v1a). At least
// one is required. Errors wrap ErrInvalidSecret.
func NewSigner(secrets ...string) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w: none given, need at least one (%s)", ErrInvalidSecret, howToGenerate)
	}
	s := &Signer{keys: make([]signingKey, len(secrets))}
	for i, secret := range secrets {
		switch {
		case strings.HasPrefix(secret, privateKeyPrefix):
			priv, err := parsePrivateKey(secret)
			if err != nil {
				return nil, numbered(err, i, len(secrets))
			}
			s.keys[i].priv = priv
			s.size += v1aLen
			s.needsBody = true
		case strings.HasPrefix(secret, publicKeyPrefix):
			err := fmt.Errorf("%w: a %q public key can only verify: sign with its %q secret key",
				ErrInvalidSecret, publicKeyPrefix, privateKeyPrefix)
			return nil, numbered(err, i, len(secrets))
		default:
			key, err := ParseSecret(secret)
			if err != nil {
				return nil, numbered(err, i, len(secrets))
			}
			s.keys[i].mac = key
			s.size += v1Len
		}
	}
	s.size += len(s.keys) - 1 // the spaces between signatures
	s.pool.New = func() any {
		st := &signState{macs: make([]hash.Hash, len(s.keys))}
		for i, k := range s.keys {
			if k.mac != nil {
				st.macs[i] = hmac.New(sha256.New, k.mac)
			}
		}
		return st
	}
	return s, nil
}

// Sign returns the webhook-signature header for the message id, sent at ts,
// with the body: "v1,<base64>" for each HMAC secret and "v1a,<base64>" for
// each ed25519 key, space separated. The signed content is
// id + "." + the Unix seconds of ts + "." + body; ts is the time of this
// attempt (verifiers refuse a stale one) and must not be before 1970. The id
// must be non-empty and free of '.', else the error wraps ErrInvalidID.
func (s *Signer) Sign(id string, ts time.Time, body []byte) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	if len(s.keys) == 0 {
		return "", fmt.Errorf("%w: the signer holds no key (build it with NewSigner)", ErrInvalidSecret)
	}
	st := s.pool.Get().(*signState)
	defer s.put(st)

	st.msg = appendPrefix(st.msg[:0], id, ts.Unix())
	prefix := len(st.msg)
	if s.needsBody {
		st.msg = append(st.msg, body...)
	}
	var b strings.Builder
	b.Grow(s.size)
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		if k.mac != nil {
			h := st.macs[i]
			h.Reset()
			h.Write(st.msg[:prefix])
			h.Write(body)
			b.WriteString("v1,")
			b.Write(base64.StdEncoding.AppendEncode(st.enc[:0], h.Sum(st.sum[:0])))
			continue
		}
		b.WriteString("v1a,")
		b.Write(base64.StdEncoding.AppendEncode(st.enc[:0], ed25519.Sign(k.priv, st.msg)))
	}
	return b.String(), nil
}

func (s *Signer) put(st *signState) {
	if cap(st.msg) > maxPooledBuffer {
		st.msg = nil
	}
	s.pool.Put(st)
}

// Headers signs like Sign and returns the three headers of flavor f: the id,
// the Unix seconds of ts, and the signatures.
func (s *Signer) Headers(f Flavor, id string, ts time.Time, body []byte) (http.Header, error) {
	names, ok := f.names()
	if !ok {
		return nil, fmt.Errorf("sign: unknown %v", f)
	}
	sig, err := s.Sign(id, ts, body)
	if err != nil {
		return nil, err
	}
	v := []string{id, strconv.FormatInt(ts.Unix(), 10), sig} // one backing array for the three values
	return http.Header{
		names.idKey:        v[0:1:1],
		names.timestampKey: v[1:2:2],
		names.signatureKey: v[2:3:3],
	}, nil
}

// appendPrefix appends "id.unix." to dst: what comes before the body in the
// signed content.
func appendPrefix(dst []byte, id string, unix int64) []byte {
	dst = append(dst, id...)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, unix, 10)
	return append(dst, '.')
}

// checkID refuses the message ids the specification forbids: with a '.' in
// the id, "a.b" + "." + ts could be read as another id and timestamp.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidID)
	}
	if strings.IndexByte(id, '.') >= 0 {
		return fmt.Errorf("%w: %q contains '.'", ErrInvalidID, id)
	}
	return nil
}
