package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// A write that waited for the database's one writer until its deadline (hookd.ErrWriterBusy) is
// a 503 with Retry-After: nothing was written, and the same request may succeed.
func TestWriterBusyIs503(t *testing.T) {
	w := httptest.NewRecorder()
	writeError(w, fmt.Errorf("send: %w", hookd.ErrWriterBusy))
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusServiceUnavailable || body["code"] != "service_unavailable" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v %v", w.Code, w.Header(), body)
	}
}

// unreadableIdempotency is a store whose idempotent responses cannot be read: the database
// is unavailable.
type unreadableIdempotency struct{ hookd.Store }

func (unreadableIdempotency) GetIdempotentResponse(context.Context, string, time.Time) (*hookd.IdempotentResponse, error) {
	return nil, fmt.Errorf("get idempotent response: %w: disk I/O error (266)", hookd.ErrUnavailable)
}

// A POST with an Idempotency-Key whose stored response cannot be read answers 503, not 500, and
// sends nothing.
func TestIdempotencyUnavailableIs503(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	client, err := hookd.NewClient(unreadableIdempotency{b.store}, &hookd.Config{Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(client, &Config{Auth: staticAuth{}, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/app", strings.NewReader(`{"name":"Acme"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k1")
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req)
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%d %q: %v", w.Code, w.Body, err)
	}
	if w.Code != http.StatusServiceUnavailable || body["code"] != "service_unavailable" || w.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v %v", w.Code, w.Header(), body)
	}
	if n := idemCountApps(t, b); n != 0 {
		t.Fatalf("%d applications created, want 0", n)
	}
}

// failingAuth is an Authenticator whose store lookup fails with err.
type failingAuth struct{ err error }

func (a failingAuth) Authenticate(context.Context, string) (Principal, error) {
	return Principal{}, fmt.Errorf("server: authenticate: %w", a.err)
}

// An authenticator that cannot read its tokens answers as a handler would, and is logged: 503
// when the database is unavailable, else 500 (it once answered with no line in the log).
func TestAuthenticatorFaults(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, tc := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("%w: connection refused", hookd.ErrUnavailable), http.StatusServiceUnavailable},
		{errors.New("token table is corrupt"), http.StatusInternalServerError},
	} {
		api, err := New(b.client, &Config{Auth: failingAuth{tc.err}, Logger: b.log.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		// A database unavailable is logged as an outage (once, however many requests fail).
		logged := func() int {
			return strings.Count(b.log.String(), "request failed") + strings.Count(b.log.String(), `msg="hookd outage began" cause="API: database unavailable"`)
		}
		before := logged()
		req := httptest.NewRequest(http.MethodGet, "/api/v1/app", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		var body map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["code"] == "" {
			t.Errorf("%v: %d %q: want a JSON error body", tc.err, w.Code, w.Body)
		}
		if w.Code != tc.status {
			t.Errorf("%v: status %d, want %d", tc.err, w.Code, tc.status)
		}
		if logged() == before {
			t.Errorf("%v: not logged", tc.err)
		}
	}
}
