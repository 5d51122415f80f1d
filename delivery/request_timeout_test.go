package delivery

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestPostRequestTimeout(t *testing.T) {
	t.Parallel()
	// Accepts, reads the request, never answers.
	base := rawServer(t, func(conn net.Conn) {
		if readRequest(t, conn) {
			_, _ = io.Copy(io.Discard, conn)
		}
	})
	for _, tc := range []struct {
		name            string
		client, request time.Duration
		want            time.Duration
		msg             string
	}{
		{"shorter than the client's", 5 * time.Second, 200 * time.Millisecond, 200 * time.Millisecond, "no response within 200ms"},
		{"bounded by the client's", 300 * time.Millisecond, time.Minute, 300 * time.Millisecond, "no response within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := localClient(t, Config{Timeout: tc.client})
			start := time.Now()
			res := c.Post(t.Context(), &Request{URL: base, Body: []byte(`{}`), Timeout: tc.request})
			elapsed := time.Since(start)
			checkFailure(t, res, tc.msg)
			if !errors.Is(res.Err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(Err, context.DeadlineExceeded) = false for %v", res.Err)
			}
			if elapsed < tc.want || elapsed > tc.want+time.Second {
				t.Errorf("returned after %v, want about %v", elapsed, tc.want)
			}
		})
	}
}

func TestPostRequestTimeoutKeepsConnection(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := localClient(t, Config{Timeout: 5 * time.Second})
	for i, d := range []time.Duration{time.Second, 2 * time.Second, 0} {
		if res := c.Post(t.Context(), &Request{URL: srv.URL, Timeout: d}); res.Outcome != Success {
			t.Fatalf("post %d: %v, %v", i, res.Outcome, res.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for three attempts with their own timeouts, want 1 kept alive", n)
	}
}

func TestPostRequestTimeoutKeepsGuard(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	c := newClient(t, &Config{Timeout: 5 * time.Second}) // loopback not allowed
	res := c.Post(t.Context(), &Request{URL: srv.URL, Timeout: time.Second})
	if !errors.Is(res.Err, ErrBlocked) {
		t.Fatalf("Err = %v, want the SSRF guard's refusal (ErrBlocked)", res.Err)
	}
}
