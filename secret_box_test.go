package hookd_test

import (
	"context"
	"errors"
	"maps"
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

// With a main key the values of the headers that carry credentials are sealed in the database:
// the file holds none of them, the other headers stay in clear, and the client reads them back
// and sends them; a client without the key, or with another, cannot read them.
func TestMainKeySealsSensitiveHeaders(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MainKey = mainKey
	b := setup(t, cfg)
	const auth, apiKey, plain = "Bearer tok-7hGq2vLp9Rz", "key-Xw4mNs8Jd3", "plain-Kq9Zr2Tb"
	b.log.Secret(auth, apiKey)
	headers := map[string]string{"Authorization": auth, "x-api-key": apiKey, "X-Tenant": plain}
	ep := b.endpoint(t, "/headers", nil, &hookd.EndpointIn{Headers: headers})
	if !maps.Equal(ep.Headers, headers) {
		t.Fatalf("CreateEndpoint returned headers %v, want %v", ep.Headers, headers)
	}
	stored := func() {
		t.Helper()
		for _, s := range []string{auth, apiKey, "tok-7hGq2vLp9Rz", "key-Xw4mNs8Jd3"} {
			if logcheck.FileHolds(t, b.path, s) {
				t.Fatalf("the database holds %q in clear", s)
			}
		}
		if !logcheck.FileHolds(t, b.path, plain) {
			t.Fatalf("the database does not hold the plain header %q: the scan reads nothing", plain)
		}
		var col string
		if err := b.store.DB().QueryRowContext(b.ctx, `SELECT headers FROM hookd_endpoints WHERE id = ?`, ep.ID).Scan(&col); err != nil {
			t.Fatal(err)
		}
		if strings.Count(col, "hookd:enc:v1:") != 2 {
			t.Fatalf("stored headers %s: want the two sensitive values sealed", col)
		}
	}
	stored()

	got, err := b.client.GetEndpoint(b.ctx, b.app.ID, ep.ID)
	if err != nil || !maps.Equal(got.Headers, headers) {
		t.Fatalf("GetEndpoint: %v, %v; want headers %v", got, err, headers)
	}
	page, err := b.client.ListEndpoints(b.ctx, b.app.ID, hookd.ListOptions{})
	if err != nil || len(page.Data) != 1 || !maps.Equal(page.Data[0].Headers, headers) {
		t.Fatalf("ListEndpoints: %+v, %v", page, err)
	}
	// An edit of something else keeps them, sealed.
	edited, err := b.client.EditEndpoint(b.ctx, b.app.ID, ep.ID, func(in *hookd.EndpointIn) error {
		in.Description = "edited"
		return nil
	})
	if err != nil || !maps.Equal(edited.Headers, headers) {
		t.Fatalf("EditEndpoint: %v, %v; want headers %v", edited, err, headers)
	}
	stored()

	// The worker sends them in clear.
	m := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, m.Message.ID, ep.ID, hookd.DeliveryDelivered)
	reqs := b.recv.Requests("/headers")
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != auth || reqs[0].Header.Get("X-Api-Key") != apiKey ||
		reqs[0].Header.Get("X-Tenant") != plain || !reqs[0].Verified {
		t.Fatalf("requests %+v", reqs)
	}

	for _, key := range []string{"", otherKey} {
		c2cfg := testConfig()
		c2cfg.MainKey = key
		c2, err := hookd.NewClient(b.store, c2cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c2.GetEndpoint(b.ctx, b.app.ID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v := got.Headers["Authorization"]; !strings.HasPrefix(v, "hookd:enc:v1:") || got.Headers["X-Tenant"] != plain {
			t.Errorf("headers read with main key %q: %v; want Authorization still sealed", key, got.Headers)
		}
	}
}

// Header values stored before a main key was set stay readable with it, and are sealed when the
// endpoint is next written.
func TestMainKeyReadsOlderHeaders(t *testing.T) {
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
	headers := map[string]string{"Authorization": "Bearer older-9fKd2", "X-Tenant": "t1"}
	ep, err := plain.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: "https://example.com/h", Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := hookd.NewClient(store, &hookd.Config{MainKey: mainKey, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sealed.GetEndpoint(ctx, app.ID, ep.ID); err != nil || !maps.Equal(got.Headers, headers) {
		t.Fatalf("older headers read with a main key: %v, %v; want %v", got, err, headers)
	}
	if _, err := sealed.EditEndpoint(ctx, app.ID, ep.ID, func(in *hookd.EndpointIn) error { in.Description = "d"; return nil }); err != nil {
		t.Fatal(err)
	}
	var col string
	if err := store.DB().QueryRowContext(ctx, `SELECT headers FROM hookd_endpoints WHERE id = ?`, ep.ID).Scan(&col); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(col, "older-9fKd2") || !strings.Contains(col, "hookd:enc:v1:") {
		t.Fatalf("headers after an edit with a main key: %s; want Authorization sealed", col)
	}
	if got, err := sealed.GetEndpoint(ctx, app.ID, ep.ID); err != nil || !maps.Equal(got.Headers, headers) {
		t.Fatalf("headers after the edit: %v, %v; want %v", got, err, headers)
	}
}
