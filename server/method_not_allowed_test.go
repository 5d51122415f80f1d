package server

import (
	"net/http"
	"testing"
)

func TestMethodNotAllowedJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/api/v1/app", "GET, POST"},
		{"PATCH", "/api/v1/app/", "GET, POST"},
		{"POST", "/api/v1/app/some-app", "GET, PUT, PATCH, DELETE"},
		{"GET", "/api/v1/auth/logout", "POST"},
		{"PUT", "/api/v1/event-type", "GET, POST"},
		{"GET", "/api/v1/event-type/schema/generate-example", "POST"},
		{"POST", "/api/v1/health", "GET"},
	} {
		resp := b.do(t, c.method, c.path, "")
		out := appReadJSON(t, resp, http.StatusMethodNotAllowed)
		if out["code"] != "method_not_allowed" || out["detail"] == "" {
			t.Fatalf("%s %s: %v", c.method, c.path, out)
		}
		if got := resp.Header.Get("Allow"); got != c.allow {
			t.Fatalf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	for _, path := range []string{"/api/v1/nothing", "/", "/api/v2/app"} {
		out := appReadJSON(t, b.do(t, "GET", path, ""), http.StatusNotFound)
		if out["code"] != "not_found" {
			t.Fatalf("GET %s: %v", path, out)
		}
	}
}
