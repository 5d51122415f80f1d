package hookd

import (
	"errors"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd/signature"
)

func TestSignerCacheReusesAndRotates(t *testing.T) {
	var c signerCache
	oldKey, newKey := signature.NewSecret(), signature.NewSecret()

	a, err := c.webhook([]string{oldKey})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.webhook([]string{oldKey}); again != a {
		t.Error("the same key set built a second signer")
	}
	rotated, err := c.webhook([]string{newKey, oldKey})
	if err != nil {
		t.Fatal(err)
	}
	if rotated == a {
		t.Fatal("a rotated key set got the old key set's signer")
	}
	// The rotated signer signs with both keys: a receiver holding either accepts it (checked with
	// the official Standard Webhooks library).
	now := time.Now()
	body := []byte(`{"n":1}`)
	h, err := rotated.Headers(signature.FlavorWebhook, "msg_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{oldKey, newKey} {
		v, err := standardwebhooks.NewWebhook(key)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(body, h); err != nil {
			t.Errorf("a receiver with one of the keys refused the rotated signature: %v", err)
		}
	}

	s1, err := c.stripeSigner([]string{oldKey})
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := c.stripeSigner([]string{oldKey}); s2 != s1 {
		t.Error("the same Stripe key set built a second signer")
	}
}

func TestSignerCacheKeepsNoRefusedKey(t *testing.T) {
	var c signerCache
	for range 2 {
		if _, err := c.webhook([]string{"whsec_not base64!"}); !errors.Is(err, signature.ErrInvalidSecret) {
			t.Fatalf("err = %v, want ErrInvalidSecret", err)
		}
	}
	if len(c.webhk) != 0 {
		t.Errorf("%d refused key sets kept", len(c.webhk))
	}
}

func TestSignerCacheIsBounded(t *testing.T) {
	var c signerCache
	for range maxCachedSigners + 10 {
		if _, err := c.webhook([]string{signature.NewSecret()}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.webhk); n > maxCachedSigners {
		t.Errorf("%d signers kept, want at most %d", n, maxCachedSigners)
	}
}
