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
	Config  string       `json:"config"`
	Machine benchMachine `json:"machine"`
	// Targets holds each target's results, in the order --target names them.
	Targets []*benchTargetReport `json:"targets"`
	// Problems lists deliveries missing, unverified or duplicated, each prefixed with its
	// target and benchmark; empty when all is well.
	Problems   []string `json:"problems"`
	CPUProfile string   `json:"cpuProfile,omitempty"`
	Kept       []string `json:"kept,omitempty"`
}

// benchTargetReport is what one target did in the benchmarks that ran.
type benchTargetReport struct {
	Name        string    `json:"name"` // library or api, as --target takes it
	Description string    `json:"description"`
	B1          *b1Result `json:"b1,omitempty"`
	B2          *b2Result `json:"b2,omitempty"`
	B3          *b3Result `json:"b3,omitempty"`
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

	SendSeconds float64 `json:"sendSeconds"` // first send to the last send returning
	SendsPerSec float64 `json:"sendsPerSec"`
	// SendP50Ms and SendP99Ms time one send: the library's Send call, or the API's POST from
	// the request's start to its answer read.
	SendP50Ms float64 `json:"sendP50Ms"`
	SendP99Ms float64 `json:"sendP99Ms"`
	// DeliverSeconds runs from the first send to the last verified delivery.
	DeliverSeconds   float64 `json:"deliverSeconds"`
	DeliveriesPerSec float64 `json:"deliveriesPerSec"`
	// SettledSeconds runs from the first send until the store has no pending delivery left.
	SettledSeconds    float64 `json:"settledSeconds"`
	RecordedDelivered int     `json:"recordedDelivered"`

	TargetDeliveriesPerSec float64 `json:"targetDeliveriesPerSec"`
	DeliveriesMet          bool    `json:"deliveriesMet"`
	// TargetSendsPerSec is the sends/s target of this target (the API's); absent: none.
	TargetSendsPerSec float64 `json:"targetSendsPerSec,omitempty"`
	// SendsMet says whether sendsPerSec reached TargetSendsPerSec; absent with no target.
	SendsMet *bool `json:"sendsMet,omitempty"`
	// Met is true when every target of B1 for this target is met.
	Met      bool        `json:"met"`
	Receiver benchCounts `json:"receiver"`
}

// judge sets the Met fields from the figures and the targets.
func (x *b1Result) judge() {
	x.DeliveriesMet = x.DeliveriesPerSec >= x.TargetDeliveriesPerSec
	x.Met = x.DeliveriesMet
	if x.TargetSendsPerSec > 0 {
		met := x.SendsPerSec >= x.TargetSendsPerSec
		x.SendsMet = &met
		x.Met = x.Met && met
	}
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
	SendP50Ms   float64     `json:"sendP50Ms"` // the send alone: Send, or the POST
	TargetP50Ms float64     `json:"targetP50Ms"`
	Met         bool        `json:"met"`
	Receiver    benchCounts `json:"receiver"`
}

// newBenchReport starts the report of a run of the targets ts with the command line args.
func newBenchReport(args []string, ts []benchTarget) *benchReport {
	r := &benchReport{
		Command: commandLine(append([]string{"hookd", "bench"}, args...)),
		Config: "hookd.Config defaults (workers, per-endpoint cap, circuit breaker, retry schedule) except Delivery.AllowSubnets 127.0.0.0/8, and Delivery.Timeout in B2; " +
			"the api target adds what hookd serve adds with its defaults (workers 50 per CPU up to 400, metrics OnAttempt, 1 MiB payloads)",
		Machine: benchMachine{
			GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		},
		Problems: []string{},
	}
	for _, t := range ts {
		r.Targets = append(r.Targets, &benchTargetReport{Name: t.name(), Description: t.describe()})
	}
	return r
}

// problems lists every delivery missing, unverified or duplicated, on every target.
func (r *benchReport) problems() []string {
	out := []string{}
	for _, t := range r.Targets {
		out = append(out, t.problems()...)
	}
	return out
}

// problems lists every delivery missing, unverified or duplicated on target r.
func (r *benchTargetReport) problems() []string {
	out := []string{}
	check := func(bench string, c benchCounts) {
		name := r.Name + " " + bench
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
			out = append(out, fmt.Sprintf("%s B1: the store records %d of %d deliveries delivered", r.Name, r.B1.RecordedDelivered, r.B1.Deliveries))
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

// text renders the report for a human: one table per benchmark, with a column per target.
func (r *benchReport) text() string {
	b := new(strings.Builder)
	m := r.Machine
	fmt.Fprintf(b, "hookd bench\ncommand: %s\n", r.Command)
	for i, t := range r.Targets {
		label := "targets:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(b, "%-8s %-7s  %s\n", label, t.Name, t.Description)
	}
	fmt.Fprintf(b, "config:  %s\nmachine: %s/%s, %d CPUs (GOMAXPROCS %d), %s\n",
		r.Config, m.GOOS, m.GOARCH, m.CPUs, m.GOMAXPROCS, m.Go)
	// Every row has every cell, so that tabwriter aligns every column but the last (it never
	// pads a line's last cell); flush trims the padding left before an empty target.
	table := new(strings.Builder)
	tw := tabwriter.NewWriter(table, 0, 0, 2, ' ', 0)
	flush := func() {
		tw.Flush()
		for line := range strings.Lines(table.String()) {
			fmt.Fprintln(b, strings.TrimRight(line, " \n"))
		}
		table.Reset()
	}
	// row adds a figure: its label, one cell per target from cell, and the target.
	row := func(label string, cell func(*benchTargetReport) string, target string) {
		cells := []string{label}
		for _, t := range r.Targets {
			cells = append(cells, cell(t))
		}
		fmt.Fprintln(tw, "  "+strings.Join(append(cells, target), "\t"))
	}
	header := func() {
		row("figure", func(t *benchTargetReport) string { return t.Name }, "target")
	}
	first := r.Targets[0]
	if x := first.B1; x != nil {
		fmt.Fprintf(b, "\nB1  %d endpoints × %s messages = %s deliveries, %d producers\n",
			x.Endpoints, thousands(x.Messages), thousands(x.Deliveries), x.Producers)
		header()
		row("deliveries/s, first send to last verified delivery", func(t *benchTargetReport) string {
			return thousands(int(t.B1.DeliveriesPerSec+0.5)) + " " + mark(t.B1.DeliveriesMet)
		}, "≥ "+thousands(int(x.TargetDeliveriesPerSec)))
		sendsTarget := ""
		for _, t := range r.Targets {
			if v := t.B1.TargetSendsPerSec; v > 0 {
				sendsTarget = joinNonEmpty(sendsTarget, t.Name+" ≥ "+thousands(int(v)))
			}
		}
		row("sends/s", func(t *benchTargetReport) string {
			s := thousands(int(t.B1.SendsPerSec + 0.5))
			if t.B1.SendsMet != nil {
				s += " " + mark(*t.B1.SendsMet)
			}
			return s
		}, sendsTarget)
		row("send latency p50 / p99", func(t *benchTargetReport) string {
			return fmt.Sprintf("%s / %s ms", ms(t.B1.SendP50Ms), ms(t.B1.SendP99Ms))
		}, "")
		row("last verified delivery after", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B1.DeliverSeconds)
		}, "")
		row("store settled after", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B1.SettledSeconds)
		}, "")
		row("recorded delivered in the store", func(t *benchTargetReport) string {
			return thousands(t.B1.RecordedDelivered) + " " + mark(t.B1.RecordedDelivered == t.B1.Deliveries)
		}, thousands(x.Deliveries))
		countsRow(row, "", func(t *benchTargetReport) benchCounts { return t.B1.Receiver }, x.Receiver.Expected)
		flush()
		fmt.Fprintln(b, "  (a send is the library's Send call, or the API's POST /api/v1/app/{app}/msg answered 202)")
	}
	if x := first.B2; x != nil {
		fmt.Fprintf(b, "\nB2  %d healthy endpoints (+1 that never answers, %s timeout), %s messages = %s healthy deliveries\n",
			x.HealthyEndpoints, time.Duration(x.TimeoutMs*float64(time.Millisecond)), thousands(x.Messages), thousands(x.Baseline.Receiver.Expected))
		header()
		row("all healthy delivered, without the hanging endpoint", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B2.Baseline.Seconds)
		}, "")
		row("all healthy delivered, with the hanging endpoint", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f s", t.B2.WithHanging.Seconds)
		}, "")
		row("ratio", func(t *benchTargetReport) string {
			return fmt.Sprintf("%.2f× %s", t.B2.Ratio, mark(t.B2.Met))
		}, fmt.Sprintf("≤ %.1f×", x.TargetRatio))
		row("requests to the hanging endpoint", func(t *benchTargetReport) string {
			return thousands(t.B2.WithHanging.Receiver.HangingRequests)
		}, "")
		countsRow(row, "without hanging: ", func(t *benchTargetReport) benchCounts { return t.B2.Baseline.Receiver }, x.Baseline.Receiver.Expected)
		countsRow(row, "with hanging: ", func(t *benchTargetReport) benchCounts { return t.B2.WithHanging.Receiver }, x.WithHanging.Receiver.Expected)
		flush()
	}
	if x := first.B3; x != nil {
		fmt.Fprintf(b, "\nB3  %d single sends in a row to one endpoint\n", x.Sends)
		header()
		row("send to verified arrival p50 / p99 / max", func(t *benchTargetReport) string {
			return fmt.Sprintf("%s / %s / %s ms %s", ms(t.B3.P50Ms), ms(t.B3.P99Ms), ms(t.B3.MaxMs), mark(t.B3.Met))
		}, "p50 ≤ "+ms(x.TargetP50Ms)+" ms")
		row("the send alone, p50", func(t *benchTargetReport) string { return ms(t.B3.SendP50Ms) + " ms" }, "")
		countsRow(row, "", func(t *benchTargetReport) benchCounts { return t.B3.Receiver }, x.Receiver.Expected)
		flush()
	}
	fmt.Fprintln(b)
	if len(r.Problems) == 0 {
		fmt.Fprintln(b, "every delivery arrived once, verified")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(b, "PROBLEM: %s\n", p)
	}
	if r.CPUProfile != "" {
		fmt.Fprintf(b, "CPU profile of the whole run (hookd, API server, receiver and producers): %s; read it with go tool pprof -top %s\n", r.CPUProfile, r.CPUProfile)
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(b, "databases kept: %s\n", strings.Join(r.Kept, " "))
	}
	return b.String()
}

// countsRow adds the receiver's counts, from counts, to a table made by text.
func countsRow(row func(string, func(*benchTargetReport) string, string), label string, counts func(*benchTargetReport) benchCounts, expected int) {
	row(label+"verified deliveries / requests / unverified / duplicates", func(t *benchTargetReport) string {
		c := counts(t)
		ok := c.Delivered >= c.Expected && c.Unverified == 0 && c.Duplicates == 0
		return fmt.Sprintf("%s / %s / %d / %d %s", thousands(c.Delivered), thousands(c.Requests), c.Unverified, c.Duplicates, mark(ok))
	}, thousands(expected)+" / - / 0 / 0")
}

// joinNonEmpty joins a and b with ", ", leaving out an empty one.
func joinNonEmpty(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + ", " + b
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
