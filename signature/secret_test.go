package signature_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

func b64(n int) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a}, n))
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := signature.NewSecret(), signature.NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("NewSecret() = %q, want the whsec_ prefix", a)
	}
	key, err := signature.ParseSecret(a)
	wantErr(t, err, nil)
	if len(key) != 24 {
		t.Errorf("NewSecret decodes to %d bytes, want 24", len(key))
	}
}

func TestNewKeyPair(t *testing.T) {
	t.Parallel()
	secret, public, err := signature.NewKeyPair()
	wantErr(t, err, nil)
	if !strings.HasPrefix(secret, "whsk_") || !strings.HasPrefix(public, "whpk_") {
		t.Fatalf("NewKeyPair() = %q, %q: want whsk_ and whpk_ prefixes", secret, public)
	}
	priv, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsk_"))
	wantErr(t, err, nil)
	pub, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(public, "whpk_"))
	wantErr(t, err, nil)
	if len(priv) != ed25519.PrivateKeySize || len(pub) != ed25519.PublicKeySize || !bytes.Equal(priv[32:], pub) {
		t.Fatalf("key sizes %d and %d, or public half differs", len(priv), len(pub))
	}
	got, err := signature.PublicKey(secret)
	if err != nil || got != public {
		t.Errorf("PublicKey(secret) = %q, %v, want %q", got, err, public)
	}
	got, err = signature.PublicKey(public)
	if err != nil || got != public {
		t.Errorf("PublicKey(public) = %q, %v, want %q", got, err, public)
	}
	// The pair works end to end, through the exported API only.
	now := time.Unix(1700000000, 0)
	sig, err := newSigner(t, secret).Sign("msg_1", now, []byte("{}"))
	wantErr(t, err, nil)
	wantErr(t, newVerifier(t, now, public).VerifyParts("msg_1", "1700000000", sig, []byte("{}")), nil)
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	for _, n := range []int{24, 32, 64} {
		for _, s := range []string{"whsec_" + b64(n), b64(n)} {
			key, err := signature.ParseSecret(s)
			if err != nil || !bytes.Equal(key, bytes.Repeat([]byte{0x5a}, n)) {
				t.Errorf("ParseSecret(%q) = %x, %v", s, key, err)
			}
		}
	}
}

// Secret errors say what is wrong and how to fix it, and never echo the
// secret.
func TestSecretErrors(t *testing.T) {
	t.Parallel()
	goodSecret, goodPublic, err := signature.NewKeyPair()
	wantErr(t, err, nil)
	// A 64-byte key whose public half belongs to another seed.
	pub, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(goodPublic, "whpk_"))
	wantErr(t, err, nil)
	mismatched := "whsk_" + base64.StdEncoding.EncodeToString(append(bytes.Repeat([]byte{0x5a}, 32), pub...))
	const gen = `(generate one with "hookd secret new")`

	for _, tc := range []struct {
		name  string
		build func() error
		want  string // the exact message, or a part of it
		exact bool
	}{
		{"empty", parse(""), `invalid secret: empty ` + gen, true},
		{"prefix only", parse("whsec_"), `invalid secret: decodes to 0 bytes, need 24 to 64 ` + gen, true},
		{"short", parse("whsec_" + b64(16)), `invalid secret: decodes to 16 bytes, need 24 to 64 ` + gen, true},
		{"one byte short", parse("whsec_" + b64(23)), "decodes to 23 bytes, need 24 to 64", false},
		{"long", parse("whsec_" + b64(65)), `invalid secret: decodes to 65 bytes, need 24 to 64 ` + gen, true},
		{"not base64", parse("whsec_Zm9v!YmFy"), "not standard base64 (illegal base64 data at input byte 4): copy the whole secret", false},
		{"url base64", parse("whsec_" + strings.Repeat("-", 32)), "not standard base64", false},
		{"whpk_ to ParseSecret", parse(goodPublic), `a "whpk_" key is an ed25519 public key`, false},
		{"whsk_ to ParseSecret", parse(goodSecret), `a "whsk_" key is an ed25519 key`, false},
		{"unknown prefix", parse("sk_live_Zm9vYmFyYmF6cXV4"), "unknown prefix", false},
		{"no secrets to NewSigner", signer(), "none given, need at least one", false},
		{"whpk_ to NewSigner", signer(goodPublic), `a "whpk_" public key can only verify: sign with its "whsk_" secret key`, false},
		{"second secret bad", signer(signature.NewSecret(), "whsec_"+b64(8)), "secret 2 of 2: invalid secret: decodes to 8 bytes", false},
		{"whsk_ of 32 bytes", signer("whsk_" + b64(32)), `"whsk_" key decodes to 32 bytes, need 64`, false},
		{"whsk_ not base64", signer("whsk_%%%"), `not standard base64 after "whsk_"`, false},
		{"whsk_ halves do not match", signer(mismatched), "does not match its seed", false},
		{"no secrets to NewVerifier", verifier(), "none given", false},
		{"whpk_ of 64 bytes", verifier("whpk_" + b64(64)), `"whpk_" key decodes to 64 bytes, need 32`, false},
		{"short secret to NewVerifier", verifier("whsec_" + b64(10)), "decodes to 10 bytes", false},
		{"PublicKey of an HMAC secret", publicKey(signature.NewSecret()), `only a "whsk_" ed25519 key has a public key`, false},
		{"PublicKey of a bad whsk_", publicKey("whsk_" + b64(10)), "decodes to 10 bytes, need 64", false},
		{"PublicKey of a bad whpk_", publicKey("whpk_" + b64(10)), "decodes to 10 bytes, need 32", false},
		{"no secrets to NewStripeSigner", stripeSigner(), "none given", false},
		{"empty Stripe secret", stripeSigner(""), `invalid secret: empty ` + gen, true},
		{"short Stripe secret", stripeSigner("whsec_123456789"), `invalid secret: 15 characters, need at least 16 ` + gen, true},
		{"short Stripe secret to the verifier", stripeVerifier("0123456789abcdef", "x"), "secret 2 of 2: invalid secret: 1 characters", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.build()
			wantErr(t, err, signature.ErrInvalidSecret)
			if tc.exact && err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if !tc.exact && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}

	// The secret's text never reaches the message.
	for _, s := range []string{"sk_live_Zm9vYmFyYmF6cXV4", "whsec_Zm9v!YmFy", "whsec_" + b64(16)} {
		if _, err := signature.ParseSecret(s); err == nil || strings.Contains(err.Error(), s[6:]) {
			t.Errorf("ParseSecret(%q) = %v: want an error that does not quote the secret", s, err)
		}
	}
}

func parse(s string) func() error {
	return func() error { _, err := signature.ParseSecret(s); return err }
}

func signer(s ...string) func() error {
	return func() error { _, err := signature.NewSigner(s...); return err }
}

func verifier(s ...string) func() error {
	return func() error { _, err := signature.NewVerifier(s...); return err }
}

func publicKey(s string) func() error {
	return func() error { _, err := signature.PublicKey(s); return err }
}

func stripeSigner(s ...string) func() error {
	return func() error { _, err := signature.NewStripeSigner(s...); return err }
}

func stripeVerifier(s ...string) func() error {
	return func() error { _, err := signature.NewStripeVerifier(s...); return err }
}
