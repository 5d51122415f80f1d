package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// GET /api/v1/health is Svix's: 200 with the status of each part, no token needed; HEAD answers
// too. The ping route stays 204.
func TestHealth(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	resp := b.do(t, "GET", "/api/v1/health", "", "Authorization", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("health: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if want := `{"database":{"status":"ok"},"queue":{"status":"ok"},"cache":{"status":"ok"}}`; string(body) != want+"\n" && string(body) != want {
		t.Fatalf("health body %s, want %s", body, want)
	}
	if resp := b.do(t, "HEAD", "/api/v1/health", "", "Authorization", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD health: %d", resp.StatusCode)
	}
	if resp := b.do(t, "GET", "/api/v1/health/ping", "", "Authorization", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("ping: %d", resp.StatusCode)
	}
}

// With the database gone, health is 500 and says the database (and the queue in it) failed.
func TestHealthDatabaseDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(client, &Config{Auth: staticAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/health", nil))
	var got healthReport
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("health body %q: %v", w.Body, err)
	}
	want := healthReport{Database: healthStatus{"error"}, Queue: healthStatus{"error"}, Cache: healthStatus{"ok"}}
	if w.Code != http.StatusInternalServerError || got != want {
		t.Fatalf("health with the database closed: %d %+v, want 500 %+v", w.Code, got, want)
	}
}
