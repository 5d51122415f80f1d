package route_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookd/hookd/internal/route"
)

// The holder receives the pattern a mux matched, from the handler; without a holder Note does
// nothing.
func TestNote(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app/{app_id}", func(w http.ResponseWriter, r *http.Request) { route.Note(r) })
	r, h := route.WithHolder(httptest.NewRequest(http.MethodGet, "/app/app_123", nil))
	mux.ServeHTTP(httptest.NewRecorder(), r)
	if h.Pattern != "GET /app/{app_id}" {
		t.Errorf("pattern %q, want GET /app/{app_id}", h.Pattern)
	}
	_, h = route.WithHolder(httptest.NewRequest(http.MethodGet, "/nothing", nil))
	if h.Pattern != "" {
		t.Errorf("pattern %q before any match", h.Pattern)
	}
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/app/app_1", nil)) // no holder: no panic
}
