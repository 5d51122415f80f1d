package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/hookd/hookd/internal/upgradetest"
)

// receiver is the fixture's receiver while the build runs: an endpoint's URL path ends in its
// role (upgradetest.Role*), and the receiver answers as that role says.
type receiver struct {
	srv *http.Server

	mu       sync.Mutex
	requests map[string][]string // path -> the message ids that arrived there, in order
	changed  chan struct{}       // closed and replaced at each request
	release  chan struct{}       // closed to let the hanging requests end
}

func newReceiver(addr string) (*receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("receiver: %w (the fixture's receiver address must be free)", err)
	}
	r := &receiver{requests: map[string][]string{}, changed: make(chan struct{}), release: make(chan struct{})}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) close() {
	close(r.release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	id := req.Header.Get("webhook-id")
	if id == "" {
		id = req.Header.Get("svix-id")
	}
	r.mu.Lock()
	r.requests[req.URL.Path] = append(r.requests[req.URL.Path], id)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	switch path.Base(req.URL.Path) {
	case upgradetest.RoleOK, upgradetest.RoleQueued:
		w.WriteHeader(http.StatusOK)
	case upgradetest.RoleHang:
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
	default:
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// got returns the message ids that arrived at path.
func (r *receiver) got(p string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests[p]...)
}

// waitFor waits until at least n requests arrived at path.
func (r *receiver) waitFor(ctx context.Context, p string, n int, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		have, changed := len(r.requests[p]), r.changed
		r.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("receiver: %d requests at %s after %s, want %d", have, p, within, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
