package hookd_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

const (
	mainKey  = "qLq0Yt9oq3F9Jm0C7ydJ7Vn0r3KgZfN7Vq1L3yS5Q0A=" // 32 bytes
	otherKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
)

// With a main key the database holds no endpoint secret in clear; the client reads them back,
// signs with them, and a client without the key, or with another, cannot read them.
func TestMainKeySealsSecrets(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MainKey = mainKey
	b := setup(t, cfg)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: b.recv.URL("/sealed"), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(secret) // sealed in the store, where the check cannot read it
	if err := b.recv.SetSecret("/sealed", secret); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := b.store.DB().QueryRowContext(b.ctx, `SELECT secret FROM hookd_endpoint_keys WHERE endpoint_id = ?`, ep.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "MfKQ9r8") || !strings.HasPrefix(stored, "hookd:enc:v1:") {
		t.Fatalf("stored secret %q: want it sealed", stored)
	}
	if got, err := b.client.EndpointSecret(b.ctx, b.app.ID, ep.ID); err != nil || got != secret {
		t.Fatalf("EndpointSecret: %q, %v", got, err)
	}
	// Deliveries are signed with the secret: the receiver verifies them with the official library.
	m := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	b.waitStatus(t, m.Message.ID, ep.ID, hookd.DeliveryDelivered)
	reqs := b.recv.Requests("/sealed")
	if len(reqs) != 1 || !reqs[0].Verified {
		t.Fatalf("requests %+v", reqs)
	}
	// A rotation seals the new secret too.
	rotated, err := b.client.RotateSecret(b.ctx, b.app.ID, ep.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(rotated)
	if got, _ := b.client.EndpointSecret(b.ctx, b.app.ID, ep.ID); got != rotated {
		t.Fatalf("after rotation: %q, want %q", got, rotated)
	}
	for _, key := range []string{"", otherKey} {
		c2cfg := testConfig()
		c2cfg.MainKey = key
		c2, err := hookd.NewClient(b.store, c2cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c2.EndpointSecret(b.ctx, b.app.ID, ep.ID); !errors.Is(err, hookd.ErrMainKey) {
			t.Errorf("EndpointSecret with main key %q: %v, want ErrMainKey", key, err)
		}
	}
}

// Secrets stored before a main key was set stay readable with it.
func TestMainKeyReadsOlderSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := logcheck.New(t)
	log.Secret(mainKey)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plain, err := hookd.NewClient(store, &hookd.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	app, err := plain.CreateApplication(ctx, &hookd.ApplicationIn{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := plain.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: "https://example.com/h"})
	if err != nil {
		t.Fatal(err)
	}
	before, err := plain.EndpointSecret(ctx, app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	log.Secret(before)
	sealed, err := hookd.NewClient(store, &hookd.Config{MainKey: mainKey, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sealed.EndpointSecret(ctx, app.ID, ep.ID); err != nil || got != before {
		t.Fatalf("an older secret read with a main key: %q, %v; want %q", got, err, before)
	}
	for _, bad := range []string{"short", "not base64 at all!!", strings.Repeat("A", 40)} {
		if _, err := hookd.NewClient(store, &hookd.Config{MainKey: bad}); !errors.Is(err, hookd.ErrInvalid) {
			t.Errorf("NewClient with main key %q: %v, want a ValidationError", bad, err)
		}
	}
}
