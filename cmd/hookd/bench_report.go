package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// This file holds what "hookd bench" measures with and what it reports: the counting receiver,
// the progress line, the results and their text.

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
	dups    int           // verified requests to answering paths beyond the first of their pair
	hangReq int           // verified requests to hanging paths
	last    time.Time     // the latest first arrival on an answering path
	changed chan struct{} // closed and replaced at every first arrival
}

// benchPath is one endpoint's path on the receiver.
type benchPath struct {
	wh   *standardwebhooks.Webhook
	hang bool // never answers: holds the request until the client gives up
}

// arrivalKey names one delivery as a receiver sees it.
type arrivalKey struct{ id, path string }

// newBenchReceiver starts a receiver; close stops it.
func newBenchReceiver() (*benchReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	r := &benchReceiver{
		base:    "http://" + ln.Addr().String(),
		paths:   map[string]*benchPath{},
		first:   map[arrivalKey]time.Time{},
		changed: make(chan struct{}),
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
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
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
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
	close(r.changed)
	r.changed = make(chan struct{})
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
func (r *benchReceiver) lastArrival() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// waitArrival waits for the verified arrival of message id at path and returns its time.
func (r *benchReceiver) waitArrival(ctx context.Context, id, path string, stall time.Duration) (time.Time, error) {
	timer := time.NewTimer(stall)
	defer timer.Stop()
	k := arrivalKey{id: id, path: path}
	for {
		r.mu.Lock()
		at, ok := r.first[k]
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
func (r *benchReceiver) counts(expected int) benchCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return benchCounts{
		Expected: expected, Delivered: r.deliveredCount(), Requests: int(r.requests.Load()),
		Unverified: int(r.unverified.Load()), Duplicates: r.dups, HangingRequests: r.hangReq,
	}
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

// benchReport is what "hookd bench" found; --json prints it as it is.
type benchReport struct {
	Command string       `json:"command"`
	Target  string       `json:"target"`
	Config  string       `json:"config"`
	Machine benchMachine `json:"machine"`
	B1      *b1Result    `json:"b1,omitempty"`
	B2      *b2Result    `json:"b2,omitempty"`
	B3      *b3Result    `json:"b3,omitempty"`
	// Problems lists deliveries missing, unverified or duplicated; empty when all is well.
	Problems   []string `json:"problems"`
	CPUProfile string   `json:"cpuProfile,omitempty"`
	Kept       []string `json:"kept,omitempty"`
}

// benchMachine is where the run happened.
type benchMachine struct {
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
}

// benchCounts is what a receiver saw, against the deliveries expected.
type benchCounts struct {
	Expected int `json:"expected"`
	// Delivered counts distinct verified (webhook-id, path) pairs on endpoints that answer.
	Delivered  int `json:"delivered"`
	Requests   int `json:"requests"`
	Unverified int `json:"unverified"`
	// Duplicates counts verified requests to answering endpoints beyond the first of their pair.
	Duplicates int `json:"duplicates"`
	// HangingRequests counts verified requests to the endpoint that never answers (B2).
	HangingRequests int `json:"hangingRequests"`
}

// b1Result is B1: fan-out throughput.
type b1Result struct {
	Endpoints  int `json:"endpoints"`
	Messages   int `json:"messages"`
	Producers  int `json:"producers"`
	Deliveries int `json:"deliveries"`

	SendSeconds float64 `json:"sendSeconds"` // first send to the last Send returning
	SendsPerSec float64 `json:"sendsPerSec"`
	SendP50Ms   float64 `json:"sendP50Ms"`
	SendP99Ms   float64 `json:"sendP99Ms"`
	// DeliverSeconds runs from the first send to the last verified delivery.
	DeliverSeconds   float64 `json:"deliverSeconds"`
	DeliveriesPerSec float64 `json:"deliveriesPerSec"`
	// SettledSeconds runs from the first send until the store has no pending delivery left.
	SettledSeconds    float64 `json:"settledSeconds"`
	RecordedDelivered int     `json:"recordedDelivered"`

	TargetDeliveriesPerSec float64     `json:"targetDeliveriesPerSec"`
	Met                    bool        `json:"met"`
	Receiver               benchCounts `json:"receiver"`
}

// b2Result is B2: healthy deliveries with and without an endpoint that never answers.
type b2Result struct {
	HealthyEndpoints int     `json:"healthyEndpoints"`
	Messages         int     `json:"messages"`
	TimeoutMs        float64 `json:"timeoutMs"`
	Baseline         *b2Run  `json:"baseline"`
	WithHanging      *b2Run  `json:"withHanging"`
	// Ratio is WithHanging.Seconds over Baseline.Seconds.
	Ratio       float64 `json:"ratio"`
	TargetRatio float64 `json:"targetRatio"`
	Met         bool    `json:"met"`
}

// b2Run is one run of B2.
type b2Run struct {
	// Seconds runs from the first send to the last verified healthy delivery.
	Seconds  float64     `json:"seconds"`
	Receiver benchCounts `json:"receiver"`
}

// b3Result is B3: latency of single sends in a row.
type b3Result struct {
	Sends       int         `json:"sends"`
	P50Ms       float64     `json:"p50Ms"` // send to verified arrival
	P99Ms       float64     `json:"p99Ms"`
	MaxMs       float64     `json:"maxMs"`
	SendP50Ms   float64     `json:"sendP50Ms"` // the Send call alone
	TargetP50Ms float64     `json:"targetP50Ms"`
	Met         bool        `json:"met"`
	Receiver    benchCounts `json:"receiver"`
}

// newBenchReport starts the report of a run of target with the command line args.
func newBenchReport(args []string, t benchTarget) *benchReport {
	return &benchReport{
		Command: commandLine(append([]string{"hookd", "bench"}, args...)),
		Target:  t.describe(),
		Config:  "hookd.Config defaults (workers, per-endpoint cap, circuit breaker, retry schedule) except Delivery.AllowSubnets 127.0.0.0/8, and Delivery.Timeout in B2",
		Machine: benchMachine{
			GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		},
		Problems: []string{},
	}
}

// problems lists every delivery missing, unverified or duplicated.
func (r *benchReport) problems() []string {
	out := []string{}
	check := func(name string, c benchCounts) {
		if c.Delivered < c.Expected {
			out = append(out, fmt.Sprintf("%s: %d of %d deliveries arrived verified", name, c.Delivered, c.Expected))
		}
		if c.Unverified > 0 {
			out = append(out, fmt.Sprintf("%s: %d requests did not verify", name, c.Unverified))
		}
		if c.Duplicates > 0 {
			out = append(out, fmt.Sprintf("%s: %d duplicate deliveries", name, c.Duplicates))
		}
	}
	if r.B1 != nil {
		check("B1", r.B1.Receiver)
		if r.B1.RecordedDelivered != r.B1.Deliveries {
			out = append(out, fmt.Sprintf("B1: the store records %d of %d deliveries delivered", r.B1.RecordedDelivered, r.B1.Deliveries))
		}
	}
	if r.B2 != nil {
		check("B2 without the hanging endpoint", r.B2.Baseline.Receiver)
		check("B2 with the hanging endpoint", r.B2.WithHanging.Receiver)
	}
	if r.B3 != nil {
		check("B3", r.B3.Receiver)
	}
	return out
}

// text renders the report for a human.
func (r *benchReport) text() string {
	b := new(strings.Builder)
	m := r.Machine
	fmt.Fprintf(b, "hookd bench\ncommand: %s\ntarget:  %s\nconfig:  %s\nmachine: %s/%s, %d CPUs (GOMAXPROCS %d), %s\n",
		r.Command, r.Target, r.Config, m.GOOS, m.GOARCH, m.CPUs, m.GOMAXPROCS, m.Go)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	row := func(cells ...string) {
		for len(cells) > 1 && cells[len(cells)-1] == "" {
			cells = cells[:len(cells)-1] // no padding after the last cell
		}
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
	}
	if x := r.B1; x != nil {
		fmt.Fprintf(b, "\nB1  %d endpoints × %s messages = %s deliveries, %d producers\n",
			x.Endpoints, thousands(x.Messages), thousands(x.Deliveries), x.Producers)
		row("figure", "value", "target", "")
		row("deliveries/s, first send to last verified delivery", thousands(int(x.DeliveriesPerSec+0.5)), "≥ "+thousands(int(x.TargetDeliveriesPerSec)), mark(x.Met))
		row("sends/s", thousands(int(x.SendsPerSec+0.5)), "", "")
		row("Send latency p50 / p99", fmt.Sprintf("%s / %s ms", ms(x.SendP50Ms), ms(x.SendP99Ms)), "", "")
		row("last verified delivery after", fmt.Sprintf("%.2f s", x.DeliverSeconds), "", "")
		row("store settled after", fmt.Sprintf("%.2f s (%s recorded delivered)", x.SettledSeconds, thousands(x.RecordedDelivered)), "", "")
		countsRow(row, "", x.Receiver)
		tw.Flush()
	}
	if x := r.B2; x != nil {
		fmt.Fprintf(b, "\nB2  %d healthy endpoints (+1 that never answers, %s timeout), %s messages = %s healthy deliveries\n",
			x.HealthyEndpoints, time.Duration(x.TimeoutMs*float64(time.Millisecond)), thousands(x.Messages), thousands(x.Baseline.Receiver.Expected))
		row("figure", "value", "target", "")
		row("all healthy delivered, without the hanging endpoint", fmt.Sprintf("%.2f s", x.Baseline.Seconds), "", "")
		row("all healthy delivered, with the hanging endpoint", fmt.Sprintf("%.2f s", x.WithHanging.Seconds), "", "")
		row("ratio", fmt.Sprintf("%.2f×", x.Ratio), fmt.Sprintf("≤ %.1f×", x.TargetRatio), mark(x.Met))
		row("requests to the hanging endpoint", thousands(x.WithHanging.Receiver.HangingRequests), "", "")
		countsRow(row, "without hanging: ", x.Baseline.Receiver)
		countsRow(row, "with hanging: ", x.WithHanging.Receiver)
		tw.Flush()
	}
	if x := r.B3; x != nil {
		fmt.Fprintf(b, "\nB3  %d single sends in a row to one endpoint\n", x.Sends)
		row("figure", "value", "target", "")
		row("send to verified arrival p50 / p99 / max", fmt.Sprintf("%s / %s / %s ms", ms(x.P50Ms), ms(x.P99Ms), ms(x.MaxMs)), "p50 ≤ "+ms(x.TargetP50Ms)+" ms", mark(x.Met))
		row("Send call p50", ms(x.SendP50Ms)+" ms", "", "")
		countsRow(row, "", x.Receiver)
		tw.Flush()
	}
	fmt.Fprintln(b)
	if len(r.Problems) == 0 {
		fmt.Fprintln(b, "every delivery arrived once, verified")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(b, "PROBLEM: %s\n", p)
	}
	if r.CPUProfile != "" {
		fmt.Fprintf(b, "CPU profile of the whole run (hookd, receiver and producers): %s; read it with go tool pprof -top %s\n", r.CPUProfile, r.CPUProfile)
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(b, "databases kept: %s\n", strings.Join(r.Kept, " "))
	}
	return b.String()
}

// countsRow adds the receiver's counts to a table.
func countsRow(row func(...string), label string, c benchCounts) {
	ok := c.Delivered >= c.Expected && c.Unverified == 0 && c.Duplicates == 0
	row(label+"verified deliveries / requests / unverified / duplicates",
		fmt.Sprintf("%s / %s / %d / %d", thousands(c.Delivered), thousands(c.Requests), c.Unverified, c.Duplicates),
		thousands(c.Expected)+" / - / 0 / 0", mark(ok))
}

// mark is ✓ for ok, ✗ otherwise.
func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// percentile returns the p-th percentile of ds by the nearest-rank method (p 100: the maximum).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// millis converts d to milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ms formats milliseconds with three significant digits or so.
func ms(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// thousands formats n with commas between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// commandLine joins args as a POSIX shell would read them back.
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=,./:@%+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
