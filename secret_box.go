package hookd

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Secrets at rest. With Config.MainKey set, a secret is stored sealed with AES-256-GCM under that
// key ("hookd:enc:v1:" and the base64 of nonce and ciphertext), with additional data that names
// where it belongs, so that a sealed value cannot be moved to another place and read there:
//   - an endpoint's signing secret, with the endpoint's id;
//   - the value of an endpoint header that SensitiveHeader names, with the endpoint's id and the
//     header's name (the other headers are configuration the API shows, and stay in clear);
//   - the body of a response kept for an Idempotency-Key (an app-portal token, for one) and the
//     digest of its request, with the response's key (idempotent_response.go).
//
// Values stored before the key was set stay readable as they are, and are sealed when next
// written (a rotation, an endpoint update). Without the key, a sealed value cannot be read: the
// worker fails the attempt's job and retries it, EndpointSecret returns ErrMainKey, and a sealed
// header value stays sealed in what GetEndpoint and ListEndpoints return.
const sealedPrefix = "hookd:enc:v1:"

// ErrMainKey is returned when a secret (a signing secret, a header value, a kept response) is
// sealed and the client has no main key, or another one.
var ErrMainKey = errors.New("hookd: the endpoint's secret is encrypted with a main key this client does not have (Config.MainKey, hookd serve --main-key)")

// secretBox seals and opens endpoint secrets; a nil box stores them as they are.
type secretBox struct {
	aead cipher.AEAD
}

// newSecretBox returns the box of a main key: 32 bytes, base64 (standard or URL alphabet, padded
// or not). An empty key gives a nil box.
func newSecretBox(mainKey string) (*secretBox, error) {
	if mainKey == "" {
		return nil, nil
	}
	var key []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(mainKey); err == nil {
			key = k
			break
		}
	}
	if len(key) != 32 {
		return nil, &ValidationError{Field: "Config.MainKey", Reason: "is not 32 bytes in base64; make one with: openssl rand -base64 32"}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &secretBox{aead: aead}, nil
}

// CheckMainKey reports whether key can be Config.MainKey: 32 bytes in base64.
func CheckMainKey(key string) error {
	if key == "" {
		return &ValidationError{Field: "Config.MainKey", Reason: "is empty"}
	}
	_, err := newSecretBox(key)
	return err
}

// seal returns the stored form of a secret that belongs where ad says (an endpoint's secret: the
// endpoint's id).
func (b *secretBox) seal(ad, secret string) string {
	if b == nil {
		return secret
	}
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(secret)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(secret), []byte(ad)))
}

// open returns the secret a stored form holds; ad is the one it was sealed with.
func (b *secretBox) open(ad, stored string) (string, error) {
	sealed, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil // stored before a main key was set
	}
	if b == nil {
		return "", ErrMainKey
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", fmt.Errorf("%w: the stored secret is damaged", ErrMainKey)
	}
	plain, err := b.aead.Open(nil, raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():], []byte(ad))
	if err != nil {
		return "", ErrMainKey
	}
	return string(plain), nil
}

// openKeys opens every key of an endpoint, in place.
func (b *secretBox) openKeys(endpointID string, keys []SigningKey) error {
	for i := range keys {
		s, err := b.open(endpointID, keys[i].Secret)
		if err != nil {
			return err
		}
		keys[i].Secret = s
	}
	return nil
}

// sensitiveHeaders are the endpoint headers whose values carry credentials, in lower case: the
// names Svix's server hides, and cookie.
var sensitiveHeaders = []string{
	"x-auth-token", "x-api-key", "www-authenticate", "authorization", "proxy-authenticate",
	"proxy-authorization", "cookie",
}

// SensitiveHeader reports whether an endpoint header named name (in any case) carries a
// credential: the API never shows its value, and with Config.MainKey it is stored sealed.
func SensitiveHeader(name string) bool {
	for _, s := range sensitiveHeaders {
		if strings.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// headerAD is the additional data of an endpoint header's sealed value.
func headerAD(endpointID, name string) string {
	return "endpoint-header\x00" + endpointID + "\x00" + strings.ToLower(name)
}

// sealedEndpoint returns the endpoint as it is stored: ep itself when nothing is to be sealed,
// else a copy whose sensitive header values are sealed. A value already in sealed form is kept as
// it is (an endpoint read and written back without being opened).
func (b *secretBox) sealedEndpoint(ep *Endpoint) *Endpoint {
	if b == nil || !hasSensitiveHeader(ep.Headers) {
		return ep
	}
	out := *ep
	out.Headers = make(map[string]string, len(ep.Headers))
	for k, v := range ep.Headers {
		if SensitiveHeader(k) && !strings.HasPrefix(v, sealedPrefix) {
			v = b.seal(headerAD(ep.ID, k), v)
		}
		out.Headers[k] = v
	}
	return &out
}

func hasSensitiveHeader(h map[string]string) bool {
	for k := range h {
		if SensitiveHeader(k) {
			return true
		}
	}
	return false
}

// openHeaders opens the endpoint's sealed header values in place. A value it cannot open (no main
// key, or another) stays sealed, and the first such failure is returned.
func (b *secretBox) openHeaders(ep *Endpoint) error {
	var first error
	for k, v := range ep.Headers {
		if !strings.HasPrefix(v, sealedPrefix) {
			continue
		}
		plain, err := b.open(headerAD(ep.ID, k), v)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("open header %s of endpoint %s: %w", k, ep.ID, err)
			}
			continue
		}
		ep.Headers[k] = plain
	}
	return first
}
