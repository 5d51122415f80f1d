// Package hookdtest helps test code that sends webhooks with hookd: a real HTTP receiver on
// 127.0.0.1 that verifies every request with the official Standard Webhooks library and records
// what arrived, and handlers that behave like the receivers customers run (healthy, failing,
// hanging, gone).
package hookdtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Request is one request the receiver got.
type Request struct {
	Path      string
	WebhookID string
	Header    http.Header
	Body      []byte
	At        time.Time
	// Verified is true when the signature verified with the path's secret (see SetSecret).
	Verified  bool
	VerifyErr error
}

// Receiver is an HTTP server on 127.0.0.1 that routes by path and records every request.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	handlers map[string]http.Handler
	secrets  map[string]*standardwebhooks.Webhook
	requests []Request
	notify   chan struct{}
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{
		handlers: map[string]http.Handler{},
		secrets:  map[string]*standardwebhooks.Webhook{},
		notify:   make(chan struct{}),
	}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ReadHeaderTimeout = 10 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("hookdtest: listen on 127.0.0.1: " + err.Error())
	}
	r.srv.Listener = ln
	r.srv.Start()
	return r
}

// URL returns the URL of a path on the receiver ("/ok" -> "http://127.0.0.1:port/ok").
func (r *Receiver) URL(path string) string { return r.srv.URL + path }

// Close stops the receiver, cutting requests still hanging.
func (r *Receiver) Close() {
	r.srv.CloseClientConnections()
	r.srv.Close()
}

// Handle sets the handler of a path. Paths without one answer 200 {"received":true}.
func (r *Receiver) Handle(path string, h http.Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[path] = h
}

// SetSecret sets the whsec_ secret the requests to path are verified with.
func (r *Receiver) SetSecret(path, secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets[path] = wh
	return nil
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	rec := Request{
		Path: req.URL.Path, WebhookID: req.Header.Get("webhook-id"), Header: req.Header.Clone(),
		Body: body, At: time.Now(),
	}
	r.mu.Lock()
	h := r.handlers[req.URL.Path]
	if wh := r.secrets[req.URL.Path]; wh != nil {
		rec.VerifyErr = wh.Verify(body, req.Header)
		rec.Verified = rec.VerifyErr == nil
	}
	r.requests = append(r.requests, rec)
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
	if h == nil {
		h = OK()
	}
	h.ServeHTTP(w, req)
}

// Requests returns the requests that arrived at path ("" for every path), in order.
func (r *Receiver) Requests(path string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.requests {
		if path == "" || q.Path == path {
			out = append(out, q)
		}
	}
	return out
}

// Wait blocks until n requests have arrived at path ("" for any) or ctx ends, and returns them.
func (r *Receiver) Wait(ctx context.Context, path string, n int) ([]Request, error) {
	for {
		r.mu.Lock()
		ch := r.notify
		count := 0
		for _, q := range r.requests {
			if path == "" || q.Path == path {
				count++
			}
		}
		r.mu.Unlock()
		if count >= n {
			return r.Requests(path), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Requests(path), ctx.Err()
		}
	}
}

// OK answers 200 {"received":true}.
func OK() http.Handler { return Status(http.StatusOK, `{"received":true}`) }

// Status answers code with body.
func Status(code int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	})
}

// FailTimes answers code with body n times, then 200 {"received":true}.
func FailTimes(n int, code int, body string) http.Handler {
	var calls atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if calls.Add(1) <= int64(n) {
			Status(code, body).ServeHTTP(w, req)
			return
		}
		OK().ServeHTTP(w, req)
	})
}

// Hang never answers: it holds the request until the client gives up or the receiver closes.
func Hang() http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) {
		<-req.Context().Done()
	})
}

// Gone answers 410 with body.
func Gone(body string) http.Handler { return Status(http.StatusGone, body) }
