package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// This file holds what "hookd bench" measures with: the counting receiver and the progress line.

// benchReceiver is the benchmarks' receiver: a real HTTP server on 127.0.0.1 that verifies every
// request with the official Standard Webhooks library and counts deliveries, keeping only the
// first verified arrival time of each (webhook-id, path). Unlike hookdtest.Receiver it keeps no
// request, and it verifies outside its lock.
type benchReceiver struct {
	srv  *http.Server
	base string

	requests   atomic.Int64 // every request
	unverified atomic.Int64 // requests to an unknown path, or whose signature did not verify
	delivered  atomic.Int64 // distinct verified (webhook-id, path) pairs on answering paths

	mu      sync.Mutex
	paths   map[string]*benchPath
	first   map[arrivalKey]time.Time
	dups    int       // verified requests to answering paths beyond the first of their pair
	hangReq int       // verified requests to hanging paths
	last    time.Time // the latest first arrival on an answering path
	// changed is closed at the next first arrival, then nil until waitArrival needs one again:
	// B1 and B2, which do not wait for one message, make no channel a delivery.
	changed chan struct{}
}

// benchPath is one endpoint's path on the receiver.
type benchPath struct {
	wh   *standardwebhooks.Webhook
	hang bool // never answers: holds the request until the client gives up
}

// arrivalKey names one delivery as a receiver sees it.
type arrivalKey struct{ id, path string }

// receiver is where a benchmark's endpoints point: a benchReceiver in this process, or one in a
// child process of its own (apartReceiver, with --apart).
type receiver interface {
	// url returns the URL of path on the receiver.
	url(path string) string
	// expect makes path accept requests signed with secret; a hanging path never answers them.
	expect(path, secret string, hang bool) error
	// deliveredCount returns the verified deliveries so far, for the progress line.
	deliveredCount() int
	// reached returns a probe for waitFor that is done at n verified deliveries.
	reached(n int) func() (int, bool, error)
	// lastArrival returns the latest first arrival on an answering path.
	lastArrival() (time.Time, error)
	// waitArrival waits for the verified arrival of message id at path and returns its time.
	waitArrival(ctx context.Context, id, path string, stall time.Duration) (time.Time, error)
	// counts returns what the receiver saw, against expected deliveries.
	counts(expected int) (benchCounts, error)
	// close stops the receiver, cutting the requests still hanging.
	close()
}

var _ receiver = (*benchReceiver)(nil)

// newBenchReceiver starts a receiver on 127.0.0.1; close stops it.
func newBenchReceiver() (*benchReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	return serveBenchReceiver(ln, nil), nil
}

// serveBenchReceiver starts a receiver on ln. A non-nil control makes the handler of the paths
// under receiverControlPrefix, which no endpoint's path starts with (the receiver child's).
func serveBenchReceiver(ln net.Listener, control func(*benchReceiver) http.Handler) *benchReceiver {
	r := &benchReceiver{
		base:  "http://" + ln.Addr().String(),
		paths: map[string]*benchPath{},
		first: map[arrivalKey]time.Time{},
	}
	var h http.Handler = r
	if control != nil {
		mux := http.NewServeMux()
		mux.Handle(receiverControlPrefix, control(r))
		mux.Handle("/", r)
		h = mux
	}
	r.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r
}

// url returns the URL of path on the receiver.
func (r *benchReceiver) url(path string) string { return r.base + path }

// expect makes path accept requests signed with secret; a hanging path never answers them.
func (r *benchReceiver) expect(path, secret string, hang bool) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return fmt.Errorf("receiver: secret of %s: %w", path, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths[path] = &benchPath{wh: wh, hang: hang}
	return nil
}

// close stops the receiver, cutting the requests still hanging.
func (r *benchReceiver) close() { r.srv.Close() }

// ServeHTTP verifies a request, records it, and answers 204 (or never, on a hanging path).
func (r *benchReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.requests.Add(1)
	body, err := readBody(req)
	r.mu.Lock()
	p := r.paths[req.URL.Path]
	r.mu.Unlock()
	if err == nil && p == nil {
		err = errors.New("unknown path")
	}
	if err == nil {
		err = p.wh.Verify(body, req.Header)
	}
	if err != nil {
		r.unverified.Add(1)
		http.Error(w, "not verified: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.arrived(arrivalKey{id: req.Header.Get(standardwebhooks.HeaderWebhookID), path: req.URL.Path}, p.hang, time.Now())
	if p.hang {
		<-req.Context().Done()
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxReceiverBody bounds what the receiver reads of a request.
const maxReceiverBody = 1 << 20

// readBody reads req's body, up to maxReceiverBody, into one buffer of its length when the
// request gives it (hookd's always does), else as it comes.
func readBody(req *http.Request) ([]byte, error) {
	if n := req.ContentLength; n >= 0 && n <= maxReceiverBody {
		body := make([]byte, n)
		_, err := io.ReadFull(req.Body, body)
		return body, err
	}
	return io.ReadAll(io.LimitReader(req.Body, maxReceiverBody))
}

// arrived records a verified request.
func (r *benchReceiver) arrived(k arrivalKey, hang bool, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if hang {
		r.hangReq++
	}
	if _, seen := r.first[k]; seen {
		if !hang {
			r.dups++
		}
		return
	}
	r.first[k] = at
	if hang {
		return
	}
	r.delivered.Add(1)
	if at.After(r.last) {
		r.last = at
	}
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// deliveredCount returns the verified deliveries so far.
func (r *benchReceiver) deliveredCount() int { return int(r.delivered.Load()) }

// reached returns a probe for waitFor that is done at n verified deliveries.
func (r *benchReceiver) reached(n int) func() (int, bool, error) {
	return func() (int, bool, error) {
		c := r.deliveredCount()
		return c, c >= n, nil
	}
}

// lastArrival returns the latest first arrival on an answering path.
func (r *benchReceiver) lastArrival() (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, nil
}

// waitDelivered waits up to wait for n verified deliveries and returns the count then. It
// looks every 5 ms, as the bench's waitFor does in this process, rather than waking at each of
// B1's thousands of arrivals.
func (r *benchReceiver) waitDelivered(ctx context.Context, n int, wait time.Duration) int {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if c := r.deliveredCount(); c >= n {
			return c
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return r.deliveredCount()
		case <-timer.C:
			return r.deliveredCount()
		}
	}
}

// waitArrival waits for the verified arrival of message id at path and returns its time.
func (r *benchReceiver) waitArrival(ctx context.Context, id, path string, stall time.Duration) (time.Time, error) {
	timer := time.NewTimer(stall)
	defer timer.Stop()
	k := arrivalKey{id: id, path: path}
	for {
		r.mu.Lock()
		at, ok := r.first[k]
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-timer.C:
			return time.Time{}, fmt.Errorf("message %s did not arrive at %s within %s", id, path, stall)
		}
	}
}

// counts returns what the receiver saw, against expected deliveries.
func (r *benchReceiver) counts(expected int) (benchCounts, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return benchCounts{
		Expected: expected, Delivered: r.deliveredCount(), Requests: int(r.requests.Load()),
		Unverified: int(r.unverified.Load()), Duplicates: r.dups, HangingRequests: r.hangReq,
	}, nil
}

// progressLine redraws one line on w ("\r") with a bar and a count, until finish.
type progressLine struct {
	w     io.Writer
	label string
	total int
	count func() int
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// startProgress starts a progress line; with a nil w it draws nothing.
func startProgress(w io.Writer, label string, total int, count func() int) *progressLine {
	p := &progressLine{w: w, label: label, total: total, count: count, start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			p.draw()
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// draw redraws the line in place.
func (p *progressLine) draw() {
	const width = 30
	n := min(p.count(), p.total)
	filled := width * n / max(p.total, 1)
	fmt.Fprintf(p.w, "\r%-20s [%s%s] %s/%s %6.1fs", p.label, strings.Repeat("=", filled),
		strings.Repeat(" ", width-filled), thousands(n), thousands(p.total), time.Since(p.start).Seconds())
}

// finish draws the line a last time and ends it.
func (p *progressLine) finish() {
	if p.w == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.draw()
	fmt.Fprintln(p.w)
}
