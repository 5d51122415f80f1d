package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// GET /api/v1/health is Svix's: 200 with the status of each part, no token needed; HEAD answers
// too. A process whose workers run reports them as a fourth part. The ping route stays 204.
func TestHealth(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	resp := b.do(t, "GET", "/api/v1/health", "", "Authorization", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("health: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if want := `{"database":{"status":"ok"},"queue":{"status":"ok"},"cache":{"status":"ok"},"workers":{"status":"ok"}}`; strings.TrimSpace(string(body)) != want {
		t.Fatalf("health body %s, want %s", body, want)
	}
	if resp := b.do(t, "HEAD", "/api/v1/health", "", "Authorization", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD health: %d", resp.StatusCode)
	}
	if resp := b.do(t, "GET", "/api/v1/health/", "", "Authorization", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("health with a trailing slash: %d", resp.StatusCode)
	}
	if resp := b.do(t, "GET", "/api/v1/health/ping", "", "Authorization", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("ping: %d", resp.StatusCode)
	}
}

// healthBundle is a client on a fresh SQLite file, not started unless asked (as in an api
// process), and its Server.
type healthBundle struct {
	store  *sqlite.Store
	client *hookd.Client
	api    *Server
	log    *bytes.Buffer
}

func newHealthBundle(t *testing.T, start bool) *healthBundle {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := client.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.Stop(ctx) })
	}
	log := &bytes.Buffer{}
	api, err := New(client, &Config{Auth: staticAuth{}, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return &healthBundle{store: store, client: client, api: api, log: log}
}

func (hb *healthBundle) get(h http.Handler, method, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

// A process that runs no workers (hookd serve --role api) answers Svix's three parts alone.
func TestHealthWithoutWorkers(t *testing.T) {
	t.Parallel()
	hb := newHealthBundle(t, false)
	w := hb.get(hb.api, "GET", "/api/v1/health")
	if want := `{"database":{"status":"ok"},"queue":{"status":"ok"},"cache":{"status":"ok"}}`; w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != want {
		t.Fatalf("health without workers: %d %s, want 200 %s", w.Code, w.Body, want)
	}
}

// With the database gone, health is 503 and names the part that failed with a reason that names
// no file; the log has the whole error, once however often health is asked.
func TestHealthDatabaseDown(t *testing.T) {
	t.Parallel()
	hb := newHealthBundle(t, false)
	if err := hb.store.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		w := hb.get(hb.api, "GET", "/api/v1/health")
		var got healthReport
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("health body %q: %v", w.Body, err)
		}
		want := healthReport{Database: healthPart{"error", "a write failed"}, Queue: healthPart{"error", "a write failed"}, Cache: healthPart{Status: "ok"}}
		if w.Code != http.StatusServiceUnavailable || got != want {
			t.Fatalf("health with the database closed: %d %+v, want 503 %+v", w.Code, got, want)
		}
		if strings.Contains(w.Body.String(), "hookd.db") || strings.Contains(w.Body.String(), "closed") {
			t.Fatalf("health's body carries the error: %s", w.Body)
		}
	}
	if n := strings.Count(hb.log.String(), `msg="hookd outage began" cause="health: database"`); n != 1 || !strings.Contains(hb.log.String(), "database is closed") {
		t.Fatalf("%d lines of the database's failure for 5 checks, want 1 with the error:\n%s", n, hb.log)
	}
}

// The Health handler serves a process without an API (hookd serve --role worker): the report
// with the workers' part, the ping, 405 for another method and 404 for another path, each with
// a JSON body.
func TestHealthHandler(t *testing.T) {
	t.Parallel()
	hb := newHealthBundle(t, true)
	h := NewHealth(hb.client, nil)
	w := hb.get(h, "GET", "/api/v1/health/")
	if want := `{"database":{"status":"ok"},"queue":{"status":"ok"},"cache":{"status":"ok"},"workers":{"status":"ok"}}`; w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != want {
		t.Fatalf("worker health: %d %s, want 200 %s", w.Code, w.Body, want)
	}
	if w := hb.get(h, "HEAD", "/api/v1/health/ping"); w.Code != http.StatusNoContent {
		t.Fatalf("worker ping: %d", w.Code)
	}
	if w := hb.get(h, "POST", "/api/v1/health"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" || !strings.Contains(w.Body.String(), `"code":"method_not_allowed"`) {
		t.Fatalf("POST health: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := hb.get(h, "GET", "/api/v1/health/other"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"code":"not_found"`) {
		t.Fatalf("another path: %d %s", w.Code, w.Body)
	}
	// Stopped, the workers make no progress: health says so.
	if err := hb.client.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := hb.get(h, "GET", "/api/v1/health"); w.Code != http.StatusOK || strings.Contains(w.Body.String(), "workers") {
		t.Fatalf("health of a client stopped: %d %s, want 200 without workers (a stopped client runs none)", w.Code, w.Body)
	}
}
