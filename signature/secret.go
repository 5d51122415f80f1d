package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
)

// Key prefixes and sizes of the Standard Webhooks specification.
const (
	secretPrefix     = "whsec_" // HMAC-SHA256 secret, signs and verifies v1
	privateKeyPrefix = "whsk_"  // ed25519 private key, signs v1a
	publicKeyPrefix  = "whpk_"  // ed25519 public key, verifies v1a

	minSecretBytes = 24 // the specification's minimum, 192 bits
	maxSecretBytes = 64 // the specification's maximum, 512 bits
	newSecretBytes = 24 // what Svix generates

	howToGenerate = `generate one with "hookd secret new"`
)

// NewSecret returns a new random HMAC secret: "whsec_" and the standard base64
// of 24 bytes from crypto/rand, the size Svix uses.
func NewSecret() string {
	var b [newSecretBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// NewKeyPair returns a new ed25519 key pair for v1a signatures: the secret is
// "whsk_" and the base64 of the 64-byte private key (seed, then public key);
// the public key is "whpk_" and the base64 of its 32 bytes. Senders sign with
// the secret; receivers verify with the public key.
func NewKeyPair() (secret, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generate ed25519 key: %w", err)
	}
	return privateKeyPrefix + base64.StdEncoding.EncodeToString(priv),
		publicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// ParseSecret returns the key bytes of a "whsec_" HMAC secret. Like Svix, it
// accepts the secret with or without the "whsec_" prefix. The rest must be
// standard base64 (with padding) of 24 to 64 bytes. Errors wrap
// ErrInvalidSecret and say what is wrong, never what the secret is.
func ParseSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty (%s)", ErrInvalidSecret, howToGenerate)
	}
	rest, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		switch {
		case strings.HasPrefix(s, privateKeyPrefix):
			return nil, fmt.Errorf("%w: a %q key is an ed25519 key, not an HMAC secret: want %q and base64 (%s)",
				ErrInvalidSecret, privateKeyPrefix, secretPrefix, howToGenerate)
		case strings.HasPrefix(s, publicKeyPrefix):
			return nil, fmt.Errorf("%w: a %q key is an ed25519 public key, not an HMAC secret: want %q and base64 (%s)",
				ErrInvalidSecret, publicKeyPrefix, secretPrefix, howToGenerate)
		case strings.Contains(s, "_"):
			// '_' is not in the standard base64 alphabet, so this is some
			// other prefix. Do not echo it: it may be part of the secret.
			return nil, fmt.Errorf("%w: unknown prefix: want %q and base64 (%s)",
				ErrInvalidSecret, secretPrefix, howToGenerate)
		}
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64 (%v): copy the whole secret, or %s",
			ErrInvalidSecret, err, howToGenerate)
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return nil, fmt.Errorf("%w: decodes to %d bytes, need %d to %d (%s)",
			ErrInvalidSecret, len(key), minSecretBytes, maxSecretBytes, howToGenerate)
	}
	return key, nil
}

// PublicKey returns the "whpk_" public key of a "whsk_" ed25519 secret, for
// the receivers of v1a signatures. Given a "whpk_" key, it checks it and
// returns it.
func PublicKey(secret string) (string, error) {
	var pub ed25519.PublicKey
	switch {
	case strings.HasPrefix(secret, privateKeyPrefix):
		priv, err := parsePrivateKey(secret)
		if err != nil {
			return "", err
		}
		pub = priv.Public().(ed25519.PublicKey)
	case strings.HasPrefix(secret, publicKeyPrefix):
		var err error
		if pub, err = parsePublicKey(secret); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("%w: only a %q ed25519 key has a public key (make a pair with NewKeyPair)",
			ErrInvalidSecret, privateKeyPrefix)
	}
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// parsePrivateKey decodes a "whsk_" key and checks that its public half
// belongs to its seed: a mismatched key would sign what no one can verify.
func parsePrivateKey(s string) (ed25519.PrivateKey, error) {
	b, err := decodeEd25519(s, privateKeyPrefix, ed25519.PrivateKeySize, "a private key: seed, then public key")
	if err != nil {
		return nil, err
	}
	priv := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
	if !bytes.Equal(priv[ed25519.SeedSize:], b[ed25519.SeedSize:]) {
		return nil, fmt.Errorf("%w: the public half of the %q key does not match its seed (make a pair with NewKeyPair)",
			ErrInvalidSecret, privateKeyPrefix)
	}
	return priv, nil
}

// parsePublicKey decodes a "whpk_" key.
func parsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := decodeEd25519(s, publicKeyPrefix, ed25519.PublicKeySize, "a public key")
	if err != nil {
		return nil, err
	}
	return ed25519.PublicKey(b), nil
}

func decodeEd25519(s, prefix string, size int, what string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, prefix))
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64 after %q (%v): copy the whole key",
			ErrInvalidSecret, prefix, err)
	}
	if len(b) != size {
		return nil, fmt.Errorf("%w: %q key decodes to %d bytes, need %d (%s; make a pair with NewKeyPair)",
			ErrInvalidSecret, prefix, len(b), size, what)
	}
	return b, nil
}

// numbered prefixes err with the position of the secret when there are several.
func numbered(err error, i, n int) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("secret %d of %d: %w", i+1, n, err)
}
