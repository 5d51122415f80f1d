package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookd/hookd"
)

// A database that cannot be reached is a 503 with Svix's error body and Retry-After, not a 500.
func TestUnavailableIs503(t *testing.T) {
	w := httptest.NewRecorder()
	writeError(w, fmt.Errorf("send: begin transaction: %w", fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", hookd.ErrUnavailable)))
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || body["code"] != "service_unavailable" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v %v", w.Code, w.Header(), body)
	}
}
