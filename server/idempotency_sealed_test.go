package server

import (
	"bytes"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
)

// testMainKey is the main key of sealedSetup's client: 32 bytes in base64.
const testMainKey = "qLq0Yt9oq3F9Jm0C7ydJ7Vn0r3KgZfN7Vq1L3yS5Q0A="

// sealedSetup is setup with the API served by a client with a main key, and a TokenAuth over the
// bundle's store whose admin token is testToken. The client is not started: the bundle's own
// client runs the worker.
func sealedSetup(t *testing.T) *bundle {
	t.Helper()
	b := setup(t, nil)
	b.log.Secret(testMainKey)
	client, err := hookd.NewClient(b.store, &hookd.Config{MainKey: testMainKey, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ta, _, err := NewTokenAuth(b.ctx, b.store, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(client, &Config{Auth: ta, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	nb := *b
	nb.client, nb.srv, nb.svix = client, srv, authSDK(srv, testToken)
	return &nb
}

// sqliteHolds reports whether the bundle's SQLite file, its write-ahead log included, holds s
// anywhere, in whatever table, row or page.
func sqliteHolds(t *testing.T, b *bundle, s string) bool {
	t.Helper()
	var seq int
	var name, path string
	if err := b.store.DB().QueryRowContext(b.ctx, `PRAGMA database_list`).Scan(&seq, &name, &path); err != nil || path == "" {
		t.Fatalf("the database's file: %q, %v", path, err)
	}
	return logcheck.FileHolds(t, path, s)
}

// With a main key, the app-portal token kept for the replay of an app-portal-access request is
// sealed: the database file holds it nowhere, and the replay answers with the same, working,
// token.
func TestIdempotencySealsPortalToken(t *testing.T) {
	t.Parallel()
	b := sealedSetup(t)
	app := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Acme","uid":"acme-portal"}`), http.StatusCreated)
	key := []string{"Idempotency-Key", "portal-1"}
	first := appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/acme-portal", `{}`, key...), http.StatusOK)
	token, _ := first["token"].(string)
	if token == "" {
		t.Fatalf("app-portal-access: %v", first)
	}
	b.log.Secret(token)
	if sqliteHolds(t, b, token) {
		t.Fatal("the database holds the app-portal token in clear")
	}
	if !sqliteHolds(t, b, app["id"].(string)) {
		t.Fatal("the database does not hold the application's id: the scan reads nothing")
	}
	var body, hash []byte
	if err := b.store.DB().QueryRowContext(b.ctx, `SELECT body, request_hash FROM hookd_idempotency`).Scan(&body, &hash); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(body, []byte("hookd:enc:v1:")) || !bytes.HasPrefix(hash, []byte("hookd:enc:v1:")) {
		t.Fatalf("stored body %q, request hash %q: want both sealed", body, hash)
	}

	resp := b.do(t, "POST", "/api/v1/auth/app-portal-access/acme-portal", `{}`, key...)
	again := appReadJSON(t, resp, http.StatusOK)
	if again["token"] != token || resp.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %v %v, want token of %v", again, resp.Header, first)
	}
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/acme-portal", "", "Authorization", "Bearer "+token), http.StatusOK)
	// Another body under the key is refused, sealed or not.
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/acme-portal", `{"expiry":7200}`, key...), http.StatusUnprocessableEntity)
}

// Responses kept before the main key was set, or before request digests were kept, still replay.
func TestIdempotencyReadsOlderResponses(t *testing.T) {
	t.Parallel()
	b := sealedSetup(t)
	now := time.Now().UTC()
	put := func(key, body string, requestHash []byte) {
		t.Helper()
		err := b.store.InTx(b.ctx, func(tx hookd.Tx) error {
			return tx.PutIdempotentResponse(b.ctx, &hookd.IdempotentResponse{
				Key: idempotencyScope(testToken, genCurrent, http.MethodPost, "/api/v1/app", "", key), Status: http.StatusCreated,
				Body: []byte(body), RequestHash: requestHash, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A row without a digest replays whatever the body; one with a digest in clear is compared.
	put("no-digest", `{"id":"app_older1","name":"Older"}`, nil)
	sum := sha256.Sum256([]byte(`{"name":"Older"}`))
	put("clear-digest", `{"id":"app_older2","name":"Older"}`, sum[:])
	for _, tc := range []struct {
		key, body, want string
		status          int
	}{
		{"no-digest", `{"name":"Anything"}`, `{"id":"app_older1","name":"Older"}`, http.StatusCreated},
		{"clear-digest", `{"name":"Older"}`, `{"id":"app_older2","name":"Older"}`, http.StatusCreated},
		{"clear-digest", `{"name":"Newer"}`, "", http.StatusUnprocessableEntity},
	} {
		resp := b.do(t, "POST", "/api/v1/app", tc.body, "Idempotency-Key", tc.key)
		got := idemBody(t, resp, tc.status)
		if tc.want != "" && (got != tc.want || resp.Header.Get("Idempotent-Replayed") != "true") {
			t.Errorf("key %s: %s %v, want the older response %s", tc.key, got, resp.Header, tc.want)
		}
	}
	if n := idemCountApps(t, b); n != 0 {
		t.Fatalf("%d applications created, want 0", n)
	}
}
