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

// Endpoint secrets at rest. With Config.MainKey set, a signing secret is stored sealed with
// AES-256-GCM under that key ("hookd:enc:v1:" and the base64 of nonce and ciphertext, the
// endpoint's id as additional data, so that a sealed secret cannot be moved to another endpoint);
// secrets stored before the key was set stay readable as they are, and are sealed when next
// written (a rotation). Without the key, a sealed secret cannot be read: the worker fails the
// attempt's job and retries it, and EndpointSecret returns ErrMainKey.
const sealedPrefix = "hookd:enc:v1:"

// ErrMainKey is returned when a signing secret is sealed and the client has no main key, or
// another one.
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

// seal returns the stored form of an endpoint's secret.
func (b *secretBox) seal(endpointID, secret string) string {
	if b == nil {
		return secret
	}
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(secret)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(secret), []byte(endpointID)))
}

// open returns the secret a stored form holds.
func (b *secretBox) open(endpointID, stored string) (string, error) {
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
	plain, err := b.aead.Open(nil, raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():], []byte(endpointID))
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
