package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
)

// The benchmarks' targets and fixed sizes, as the issue sets them.
const (
	b1TargetPerSec         = 1500.0                // B1: deliveries/s, first send to last verified delivery
	b1TargetSendsPerSecAPI = 1000.0                // B1 through the API: sends/s, each fanned out to 10 endpoints
	b2TargetRatio          = 1.2                   // B2: healthy deliveries with a hanging endpoint vs without
	b3TargetP50            = 20 * time.Millisecond // B3: p50 from send to verified arrival
)

// benchTargetNames are the targets --target accepts, in the order a run measures them.
var benchTargetNames = []string{"library", "api"}

const benchUsage = `bench [--messages N] [--endpoints N] [--producers N] [--only B1,B2,B3]
             [--target library,api] [--json] [--cpuprofile FILE] [--keep]

Starts a receiver on 127.0.0.1 and measures hookd on a fresh SQLite file per run,
through each --target in turn, benchmark by benchmark:
  library  the Go library in this process: Send on a hookd.Client.
  api      the HTTP API as "hookd serve" builds it (server.New behind an http.Server
           on 127.0.0.1, admin token), called with POST /api/v1/app/{app}/msg over a
           keep-alive net/http client with plain JSON, not the Svix SDK.
The benchmarks:
  B1  --messages messages, each fanned out to --endpoints endpoints, sent by --producers
      concurrent producers: sends/s, send latency, and deliveries/s from the first send
      to the last verified delivery (target 1,500/s; through the API also 1,000 sends/s).
  B2  200 messages to --endpoints endpoints of which one never answers (1 s timeout):
      time until every healthy delivery arrives, against the same run without the
      hanging endpoint (target: within 1.2x).
  B3  100 single sends in a row to one endpoint: p50/p99 from send to verified arrival
      (target: p50 within 20 ms).
The receiver verifies every request with the official Standard Webhooks library; a
delivery counts only once verified. hookd runs with its default configuration, except
that loopback addresses are allowed (and B2's 1 s timeout). The receiver, the
producers and, for the api target, the HTTP server share this process and its CPUs
with hookd.

Exit code 1 when a delivery is missing, unverified or duplicated, or a run fails;
a missed target is reported, not an error.`

// benchOptions are the sizes of a run. The flags set the first four; tests shrink the rest.
type benchOptions struct {
	messages  int      // B1 messages
	endpoints int      // B1 endpoints; B2 endpoints, one of which hangs
	producers int      // concurrent producers in B1 and B2
	only      []string // the benchmarks to run, in order: a subset of B1, B2, B3
	targets   []string // the targets to measure, in order: a subset of benchTargetNames

	b2Messages int           // B2 messages
	b2Timeout  time.Duration // B2's delivery timeout
	b3Sends    int           // B3 sends
	stall      time.Duration // a run fails after this long without progress

	progress io.Writer // where the progress line goes; nil: nowhere
}

// defaultBenchOptions returns the sizes the issue sets.
func defaultBenchOptions() benchOptions {
	return benchOptions{
		messages: 2000, endpoints: 10, producers: 8, only: []string{"B1", "B2", "B3"},
		targets:    slices.Clone(benchTargetNames),
		b2Messages: 200, b2Timeout: time.Second, b3Sends: 100, stall: 30 * time.Second,
	}
}

// runBench handles "hookd bench".
func runBench(ctx context.Context, e *env, args []string) error {
	return benchCommand(ctx, e, args, nil)
}

// benchCommand is runBench with a hook that adjusts the options after the flags are parsed.
func benchCommand(ctx context.Context, e *env, args []string, adjust func(*benchOptions)) error {
	o := defaultBenchOptions()
	f := newFlags(e, "bench", benchUsage)
	f.IntVar(&o.messages, "messages", o.messages, "B1: messages, each fanned out to every endpoint")
	f.IntVar(&o.endpoints, "endpoints", o.endpoints, "B1: endpoints; B2: endpoints, one of which never answers")
	f.IntVar(&o.producers, "producers", o.producers, "B1 and B2: concurrent producers calling Send")
	only := f.String("only", strings.Join(o.only, ","), "the benchmarks to run, comma-separated")
	targets := f.String("target", strings.Join(o.targets, ","), "what to measure, comma-separated: library (the Go library), api (the HTTP API)")
	asJSON := f.Bool("json", false, "print the results as JSON on stdout, and nothing on stderr but errors")
	cpuprofile := f.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof -top FILE)")
	keep := f.Bool("keep", false, "keep the database files and print where they are")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := o.check(*only, *targets); err != nil {
		return err
	}
	if adjust != nil {
		adjust(&o)
	}
	if !*asJSON {
		o.progress = e.stderr
	}

	if *cpuprofile != "" {
		pf, err := os.Create(*cpuprofile)
		if err != nil {
			return failf("check that the directory exists and is writable", "bench: --cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return failf("", "bench: start the CPU profile: %v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			pf.Close()
		}()
	}
	dir, err := os.MkdirTemp("", "hookd-bench-")
	if err != nil {
		return failf("", "bench: %v", err)
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}

	var ts []benchTarget
	for _, name := range o.targets {
		switch name {
		case "library":
			ts = append(ts, &embeddedTarget{dir: dir})
		case "api":
			ts = append(ts, &apiTarget{dir: dir, producers: o.producers})
		}
	}
	rep := newBenchReport(args, ts)
	rep.CPUProfile = *cpuprofile
	if err := runBenchmarks(ctx, ts, &o, rep); err != nil {
		hint := "rerun with --keep to keep the database files for a look"
		if *keep {
			hint = "the database files are kept in " + dir
		}
		return failf(hint, "bench: %v", err)
	}
	if *keep {
		rep.Kept = keptFiles(dir)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if _, err := io.WriteString(e.stdout, rep.text()); err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return failf("", "bench: %s", strings.Join(rep.Problems, "; "))
	}
	return nil
}

// check validates the sizes and sets only and targets from the --only and --target values.
func (o *benchOptions) check(only, targets string) error {
	for _, v := range []struct {
		flag   string
		n, max int
	}{{"messages", o.messages, 1_000_000}, {"endpoints", o.endpoints, 1000}, {"producers", o.producers, 1000}} {
		if v.n < 1 || v.n > v.max {
			return usageErrorf(fmt.Sprintf("use --%s between 1 and %d", v.flag, v.max), "bench: --%s %d is out of range", v.flag, v.n)
		}
	}
	var err error
	o.only, err = pickNames("only", "benchmark", only, []string{"B1", "B2", "B3"}, strings.ToUpper,
		"use --only with B1, B2 and B3 separated by commas, e.g. --only B1,B3")
	if err != nil {
		return err
	}
	o.targets, err = pickNames("target", "target", targets, benchTargetNames, strings.ToLower,
		"use --target with library and api separated by commas, e.g. --target api")
	if err != nil {
		return err
	}
	if slices.Contains(o.only, "B2") && o.endpoints < 2 {
		return usageErrorf("use --endpoints 2 or more, or leave B2 out with --only B1,B3", "bench: B2 needs at least 2 endpoints, one of which never answers")
	}
	return nil
}

// pickNames reads the comma-separated value of --flag: each item, normalized by norm, must be one
// of allowed; the result holds the items picked, in allowed's order, each once.
func pickNames(flag, what, value string, allowed []string, norm func(string) string, hint string) ([]string, error) {
	picked := map[string]bool{}
	for _, s := range strings.Split(value, ",") {
		name := norm(strings.TrimSpace(s))
		switch {
		case name == "":
		case slices.Contains(allowed, name):
			picked[name] = true
		default:
			return nil, usageErrorf(hint, "bench: unknown %s %q in --%s", what, s, flag)
		}
	}
	var out []string
	for _, name := range allowed {
		if picked[name] {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, usageErrorf(hint, "bench: --%s %q names no %s", flag, value, what)
	}
	return out, nil
}

// runBenchmarks runs the chosen benchmarks on every target, benchmark by benchmark so that the
// targets' runs of one benchmark are close in time, and fills rep, whose Targets are ts's.
func runBenchmarks(ctx context.Context, ts []benchTarget, o *benchOptions, rep *benchReport) error {
	for _, name := range o.only {
		for i, t := range ts {
			tr := rep.Targets[i]
			var err error
			switch name {
			case "B1":
				tr.B1, err = runB1(ctx, t, o)
			case "B2":
				tr.B2, err = runB2(ctx, t, o)
			case "B3":
				tr.B3, err = runB3(ctx, t, o)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.name(), name, err)
			}
		}
	}
	rep.Problems = rep.problems()
	return nil
}

// benchTarget is the system a benchmark measures; each run opens a fresh instance of it. The
// targets are the library embedded in this process and the HTTP API in front of it, each on a
// new SQLite file per run; a PostgreSQL store and a Redis queue are meant to become more.
type benchTarget interface {
	// name is the target's short name, as --target takes it and the report's columns show it.
	name() string
	// describe says what the target is, for the report.
	describe() string
	// targetSendsPerSec is B1's sends/s target through this target; 0: none.
	targetSendsPerSec() float64
	// open starts a fresh instance named name (unique within a run) holding one application,
	// whose attempts time out after timeout (0: the default).
	open(ctx context.Context, name string, timeout time.Duration) (benchInstance, error)
}

// benchInstance is one fresh instance of a target with one application.
type benchInstance interface {
	// addEndpoint subscribes url to every message of the application and returns its secret.
	addEndpoint(ctx context.Context, url string) (secret string, err error)
	// send sends one message to the application and returns its id, the webhook-id receivers see.
	send(ctx context.Context, payload []byte) (string, error)
	// count returns how many of the application's deliveries are in status.
	count(ctx context.Context, status hookd.DeliveryStatus) (int, error)
	// close stops the instance; its files stay where the target put them.
	close()
}

// embeddedTarget is hookd embedded in this process: a Client on a new SQLite file in dir, with
// its own queue in the same file, configured as the demos are (defaults, loopback allowed).
type embeddedTarget struct {
	dir string
}

func (t *embeddedTarget) name() string { return "library" }

func (t *embeddedTarget) describe() string {
	return "hookd library in this process (hookd.Client.Send); SQLite store with its own queue, a fresh file per run"
}

func (t *embeddedTarget) targetSendsPerSec() float64 { return 0 }

func (t *embeddedTarget) open(ctx context.Context, name string, timeout time.Duration) (benchInstance, error) {
	c, stop, err := openClient(ctx, filepath.Join(t.dir, t.name()+"-"+name+".db"), localConfig(timeout))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "bench " + name, UID: "bench-" + name})
	if err != nil {
		stop()
		return nil, err
	}
	return &embeddedInstance{c: c, stop: stop, app: app.ID}, nil
}

// embeddedInstance is one application on one embedded client.
type embeddedInstance struct {
	c         *hookd.Client
	stop      func()
	app       string
	endpoints []string // ids
}

func (i *embeddedInstance) addEndpoint(ctx context.Context, url string) (string, error) {
	ep, err := i.c.CreateEndpoint(ctx, i.app, &hookd.EndpointIn{URL: url})
	if err != nil {
		return "", err
	}
	i.endpoints = append(i.endpoints, ep.ID)
	return i.c.EndpointSecret(ctx, i.app, ep.ID)
}

func (i *embeddedInstance) send(ctx context.Context, payload []byte) (string, error) {
	res, err := i.c.Send(ctx, i.app, &hookd.MessageIn{EventType: "bench.event", Payload: json.RawMessage(payload)})
	if err != nil {
		return "", err
	}
	if res.Deliveries != len(i.endpoints) {
		return "", fmt.Errorf("send %s: %d deliveries, want one per endpoint (%d)", res.Message.ID, res.Deliveries, len(i.endpoints))
	}
	return res.Message.ID, nil
}

func (i *embeddedInstance) count(ctx context.Context, status hookd.DeliveryStatus) (int, error) {
	return countDeliveries(ctx, i.c.Store(), i.endpoints, status)
}

func (i *embeddedInstance) close() { i.stop() }

// countDeliveries counts the deliveries in status to the endpoints with ids endpoints.
func countDeliveries(ctx context.Context, store hookd.Store, endpoints []string, status hookd.DeliveryStatus) (int, error) {
	n := 0
	for _, ep := range endpoints {
		f := hookd.DeliveryFilter{EndpointID: ep, Status: status, ListOptions: hookd.ListOptions{Limit: 250}}
		for {
			page, err := store.ListDeliveries(ctx, f)
			if err != nil {
				return 0, fmt.Errorf("count %s deliveries: %w", status, err)
			}
			n += len(page.Data)
			if page.Done || page.Iterator == "" {
				break
			}
			f.Iterator = page.Iterator
		}
	}
	return n, nil
}

// keptFiles lists the database files left in dir.
func keptFiles(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	return paths
}

// benchPayload is the body of message seq of a benchmark: about 110 bytes of JSON.
func benchPayload(bench string, seq int) []byte {
	return fmt.Appendf(nil, `{"type":"bench.event","bench":%q,"seq":%d,"customer":"cus_%06d","amount":4200,"currency":"eur"}`, bench, seq, seq%1000)
}

// addBenchEndpoint creates an endpoint of inst for path on recv and teaches recv its secret.
func addBenchEndpoint(ctx context.Context, inst benchInstance, recv *benchReceiver, path string, hang bool) error {
	secret, err := inst.addEndpoint(ctx, recv.url(path))
	if err != nil {
		return fmt.Errorf("create endpoint %s: %w", path, err)
	}
	return recv.expect(path, secret, hang)
}

// sendAll sends n messages through producers concurrent producers and returns the duration of
// every Send, in no particular order. The first error stops every producer.
func sendAll(ctx context.Context, inst benchInstance, bench string, n, producers int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	lats := make([][]time.Duration, producers)
	errs := make([]error, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				start := time.Now()
				if _, err := inst.send(ctx, benchPayload(bench, i)); err != nil {
					errs[p] = fmt.Errorf("send message %d: %w", i, err)
					cancel()
					return
				}
				lats[p] = append(lats[p], time.Since(start))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(lats...), nil
}

// waitFor polls probe every interval until it says done. It fails when ctx ends or when the
// progress probe reports stays the same for stall.
func waitFor(ctx context.Context, what string, stall, interval time.Duration, probe func() (progress int, done bool, err error)) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last, lastAt := 0, time.Now()
	for first := true; ; first = false {
		p, done, err := probe()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		case done:
			return nil
		case first || p != last:
			last, lastAt = p, time.Now()
		case time.Since(lastAt) > stall:
			return fmt.Errorf("%s: no progress for %s (at %d)", what, stall, p)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// runB1 measures fan-out throughput: messages × endpoints deliveries from concurrent producers.
func runB1(ctx context.Context, t benchTarget, o *benchOptions) (*b1Result, error) {
	inst, err := t.open(ctx, "b1", 0)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	recv, err := newBenchReceiver()
	if err != nil {
		return nil, err
	}
	defer recv.close()
	for i := range o.endpoints {
		if err := addBenchEndpoint(ctx, inst, recv, fmt.Sprintf("/b1/ep%d", i), false); err != nil {
			return nil, err
		}
	}
	total := o.messages * o.endpoints
	bar := startProgress(o.progress, t.name()+" B1 deliveries", total, recv.deliveredCount)
	start := time.Now()
	lats, err := sendAll(ctx, inst, "B1", o.messages, o.producers)
	sent := time.Since(start)
	if err == nil {
		err = waitFor(ctx, "verified deliveries", o.stall, 5*time.Millisecond, recv.reached(total))
	}
	bar.finish()
	if err != nil {
		return nil, err
	}
	delivered := recv.lastArrival().Sub(start)
	// The last request arrived; wait until the store has recorded every delivery too.
	err = waitFor(ctx, "deliveries recorded", o.stall, 20*time.Millisecond, func() (int, bool, error) {
		n, err := inst.count(ctx, hookd.DeliveryPending)
		return -n, n == 0, err
	})
	if err != nil {
		return nil, err
	}
	settled := time.Since(start)
	recorded, err := inst.count(ctx, hookd.DeliveryDelivered)
	if err != nil {
		return nil, err
	}
	res := &b1Result{
		Endpoints: o.endpoints, Messages: o.messages, Producers: o.producers, Deliveries: total,
		SendSeconds: sent.Seconds(), SendsPerSec: float64(o.messages) / sent.Seconds(),
		SendP50Ms: millis(percentile(lats, 50)), SendP99Ms: millis(percentile(lats, 99)),
		DeliverSeconds: delivered.Seconds(), DeliveriesPerSec: float64(total) / delivered.Seconds(),
		SettledSeconds: settled.Seconds(), RecordedDelivered: recorded,
		TargetDeliveriesPerSec: b1TargetPerSec, TargetSendsPerSec: t.targetSendsPerSec(),
		Receiver: recv.counts(total),
	}
	res.judge()
	return res, nil
}

// runB2 measures isolation: the same healthy deliveries without, then with, an endpoint that
// never answers.
func runB2(ctx context.Context, t benchTarget, o *benchOptions) (*b2Result, error) {
	res := &b2Result{
		HealthyEndpoints: o.endpoints - 1, Messages: o.b2Messages, TimeoutMs: millis(o.b2Timeout),
		TargetRatio: b2TargetRatio,
	}
	var err error
	if res.Baseline, err = runB2Once(ctx, t, o, false); err != nil {
		return nil, fmt.Errorf("without the hanging endpoint: %w", err)
	}
	if res.WithHanging, err = runB2Once(ctx, t, o, true); err != nil {
		return nil, fmt.Errorf("with the hanging endpoint: %w", err)
	}
	res.Ratio = res.WithHanging.Seconds / res.Baseline.Seconds
	res.Met = res.Ratio <= b2TargetRatio
	return res, nil
}

// runB2Once sends B2's messages to its healthy endpoints, and to a hanging one when hang is set,
// and times the healthy deliveries.
func runB2Once(ctx context.Context, t benchTarget, o *benchOptions, hang bool) (*b2Run, error) {
	name, label := "b2-baseline", "B2 without hanging"
	if hang {
		name, label = "b2-hanging", "B2 with hanging"
	}
	inst, err := t.open(ctx, name, o.b2Timeout)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	recv, err := newBenchReceiver()
	if err != nil {
		return nil, err
	}
	defer recv.close() // first, so the hanging requests are cut before the client stops
	for i := range o.endpoints - 1 {
		if err := addBenchEndpoint(ctx, inst, recv, fmt.Sprintf("/b2/ep%d", i), false); err != nil {
			return nil, err
		}
	}
	if hang {
		if err := addBenchEndpoint(ctx, inst, recv, "/b2/hang", true); err != nil {
			return nil, err
		}
	}
	total := o.b2Messages * (o.endpoints - 1)
	bar := startProgress(o.progress, t.name()+" "+label, total, recv.deliveredCount)
	start := time.Now()
	_, err = sendAll(ctx, inst, "B2", o.b2Messages, o.producers)
	if err == nil {
		err = waitFor(ctx, "verified healthy deliveries", o.stall, 5*time.Millisecond, recv.reached(total))
	}
	bar.finish()
	if err != nil {
		return nil, err
	}
	return &b2Run{Seconds: recv.lastArrival().Sub(start).Seconds(), Receiver: recv.counts(total)}, nil
}

// runB3 measures latency: single sends in a row, each waited for at the receiver.
func runB3(ctx context.Context, t benchTarget, o *benchOptions) (*b3Result, error) {
	inst, err := t.open(ctx, "b3", 0)
	if err != nil {
		return nil, err
	}
	defer inst.close()
	recv, err := newBenchReceiver()
	if err != nil {
		return nil, err
	}
	defer recv.close()
	const path = "/b3/ep0"
	if err := addBenchEndpoint(ctx, inst, recv, path, false); err != nil {
		return nil, err
	}
	bar := startProgress(o.progress, t.name()+" B3 single sends", o.b3Sends, recv.deliveredCount)
	var lats, sendLats []time.Duration
	for i := range o.b3Sends {
		start := time.Now()
		id, err := inst.send(ctx, benchPayload("B3", i))
		if err != nil {
			bar.finish()
			return nil, fmt.Errorf("send message %d: %w", i, err)
		}
		sendLats = append(sendLats, time.Since(start))
		at, err := recv.waitArrival(ctx, id, path, o.stall)
		if err != nil {
			bar.finish()
			return nil, err
		}
		lats = append(lats, at.Sub(start))
	}
	bar.finish()
	res := &b3Result{
		Sends: o.b3Sends, P50Ms: millis(percentile(lats, 50)), P99Ms: millis(percentile(lats, 99)),
		MaxMs: millis(percentile(lats, 100)), SendP50Ms: millis(percentile(sendLats, 50)),
		TargetP50Ms: millis(b3TargetP50), Receiver: recv.counts(o.b3Sends),
	}
	res.Met = res.P50Ms <= res.TargetP50Ms
	return res, nil
}
