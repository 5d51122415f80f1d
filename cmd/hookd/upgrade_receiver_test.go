package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// upgradeRequest is one request the fixture's receiver got.
type upgradeRequest struct {
	path   string
	msgID  string // webhook-id
	header http.Header
	body   []byte
}

// upgradeReceiver listens on a fixture's receiver address, where every endpoint URL of the
// fixture points, answers 200 and records each request.
type upgradeReceiver struct {
	mu       sync.Mutex
	requests []upgradeRequest
	changed  chan struct{} // closed and replaced at each request
}

// listenUpgradeReceiver binds addr (the manifest's receiver) until the test ends.
func listenUpgradeReceiver(t *testing.T, addr string) *upgradeReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("bind the fixture's receiver address %s: %v (each fixture has its own; is another test or generator on it?)", addr, err)
	}
	r := &upgradeReceiver{changed: make(chan struct{})}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return r
}

func (r *upgradeReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	r.mu.Lock()
	r.requests = append(r.requests, upgradeRequest{path: req.URL.Path, msgID: req.Header.Get("webhook-id"), header: req.Header.Clone(), body: body})
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// all returns the requests so far, in order, and a channel closed at the next one.
func (r *upgradeReceiver) all() ([]upgradeRequest, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]upgradeRequest(nil), r.requests...), r.changed
}
