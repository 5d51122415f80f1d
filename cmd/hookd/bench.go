package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

// The benchmarks' targets and fixed sizes, as the issue sets them.
const (
	b1TargetPerSec         = 1500.0                // B1: deliveries/s, first send to last verified delivery
	b1TargetPerSecPostgres = 5000.0                // B1 on PostgreSQL (either queue)
	b1TargetSendsPerSecAPI = 1000.0                // B1 through the API: sends/s, each fanned out to 10 endpoints
	b2TargetRatio          = 1.2                   // B2: healthy deliveries with a hanging endpoint vs without
	b3TargetP50            = 20 * time.Millisecond // B3: p50 from send to verified arrival
	b3TargetP50Postgres    = 10 * time.Millisecond // B3 on PostgreSQL (either queue)
)

// benchTargetNames are the targets --target accepts, in the order a run measures them. The
// last two need --db, and the last --queue too.
var benchTargetNames = []string{"library", "api", "postgres", "postgres+redis", "postgres+river"}

const benchUsage = `bench [--messages N] [--endpoints N] [--producers N] [--only B1,B2,B3]
             [--db postgres://...] [--queue redis://...]
             [--target library,api,postgres,postgres+redis,postgres+river] [--json]
             [--cpuprofile FILE] [--keep]

Starts a receiver on 127.0.0.1 and measures hookd through each --target in turn,
benchmark by benchmark, each run on a fresh database:
  library         the Go library in this process: Send on a hookd.Client, on a new
                  SQLite file with the store's own queue.
  api             the HTTP API as "hookd serve" builds it (server.New behind an
                  http.Server on 127.0.0.1, admin token) on a new SQLite file, called
                  with POST /api/v1/app/{app}/msg over a keep-alive net/http client
                  with plain JSON, not the Svix SDK.
  postgres        with --db: the Go library in this process on PostgreSQL, with the
                  store's own queue (hookd_jobs, LISTEN/NOTIFY), in a new schema per
                  run, dropped afterwards.
  postgres+redis  with --db and --queue: the same with the Redis queue, in a new
                  namespace per run whose keys are deleted afterwards.
  postgres+river  with --db: the same with River's queue (postgres.RiverQueue) in
                  place of the store's own: the baseline the store's queue replaced.
--target defaults to every target that --db and --queue make available, except
postgres+river, which runs only when named.
The benchmarks:
  B1  --messages messages, each fanned out to --endpoints endpoints, sent by --producers
      concurrent producers: sends/s, send latency, and deliveries/s from the first send
      to the last verified delivery (target 1,500/s on SQLite, 5,000/s on PostgreSQL;
      through the API also 1,000 sends/s). Also the CPU time per delivery of this
      process, and of the postgres and redis-server processes on this machine, and
      their peak memory.
  B2  200 messages to --endpoints endpoints of which one never answers (1 s timeout):
      time until every healthy delivery arrives, against the same run without the
      hanging endpoint (target: within 1.2x).
  B3  100 single sends in a row to one endpoint: p50/p99 from send to verified arrival
      (target: p50 within 20 ms on SQLite, 10 ms on PostgreSQL).
The receiver verifies every request with the official Standard Webhooks library; a
delivery counts only once verified. hookd runs with its default configuration, except
that loopback addresses are allowed (and B2's 1 s timeout). The receiver, the
producers and, for the api target, the HTTP server share this process and its CPUs
with hookd, and count in its CPU time. With --keep the SQLite files, the PostgreSQL
schemas and the Redis keys stay, and the report says where.

Exit code 1 when a delivery is missing, unverified or duplicated, or a run fails;
a missed target is reported, not an error.`

// benchOptions are the sizes of a run. The flags set the first seven; tests shrink the rest.
type benchOptions struct {
	messages  int      // B1 messages
	endpoints int      // B1 endpoints; B2 endpoints, one of which hangs
	producers int      // concurrent producers in B1 and B2
	only      []string // the benchmarks to run, in order: a subset of B1, B2, B3
	targets   []string // the targets to measure, in order: a subset of benchTargetNames
	dbURL     string   // --db: PostgreSQL for the postgres targets; "": none
	queueURL  string   // --queue: Redis for the postgres+redis target; "": none

	b2Messages int           // B2 messages
	b2Timeout  time.Duration // B2's delivery timeout
	b3Sends    int           // B3 sends
	stall      time.Duration // a run fails after this long without progress
	// run names this run in the PostgreSQL schemas and Redis namespaces it creates: random.
	run string

	progress io.Writer // where the progress line goes; nil: nowhere
}

// defaultBenchOptions returns the sizes the issue sets.
func defaultBenchOptions() benchOptions {
	return benchOptions{
		messages: 2000, endpoints: 10, producers: 8, only: []string{"B1", "B2", "B3"},
		targets:    []string{"library", "api"},
		b2Messages: 200, b2Timeout: time.Second, b3Sends: 100, stall: 30 * time.Second,
		run: newBenchRunID(),
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
	f.StringVar(&o.dbURL, "db", "", "also measure hookd on the PostgreSQL database at `URL` (postgres://USER@HOST:PORT/DATABASE?sslmode=disable), in a new schema per run")
	f.StringVar(&o.queueURL, "queue", "", "with --db, also measure it with the Redis queue at `URL` (redis://HOST:PORT/DB), in a new namespace per run")
	targets := f.String("target", "", "what to measure, comma-separated: library (the Go library), api (the HTTP API), postgres (the library on --db), postgres+redis (the same with --queue); default: every one the flags make available")
	asJSON := f.Bool("json", false, "print the results as JSON on stdout, and nothing on stderr but errors")
	cpuprofile := f.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof -top FILE)")
	keep := f.Bool("keep", false, "keep the SQLite files, PostgreSQL schemas and Redis keys, and print where they are")
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
	// Reach the servers first: a wrong URL fails now, not after the SQLite targets' runs.
	if err := pingBenchBackends(ctx, &o); err != nil {
		return failf("check that the server runs and that the URL is right", "bench: %v", err)
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

	var logger *slog.Logger // the PostgreSQL targets' warnings; with --json, none
	if !*asJSON {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	var ts []benchTarget
	for _, name := range o.targets {
		switch name {
		case "library":
			ts = append(ts, &embeddedTarget{dir: dir})
		case "api":
			ts = append(ts, &apiTarget{dir: dir, producers: o.producers})
		case "postgres":
			ts = append(ts, &postgresTarget{dbURL: o.dbURL, run: o.run, keep: *keep, logger: logger})
		case "postgres+redis":
			ts = append(ts, &postgresTarget{dbURL: o.dbURL, queueURL: o.queueURL, run: o.run, keep: *keep, logger: logger})
		case "postgres+river":
			ts = append(ts, &postgresTarget{dbURL: o.dbURL, river: true, run: o.run, keep: *keep, logger: logger})
		}
	}
	rep := newBenchReport(args, ts)
	rep.CPUProfile = *cpuprofile
	if o.dbURL != "" {
		rep.Run, rep.Keep = o.run, *keep
	}
	if err := runBenchmarks(ctx, ts, &o, rep); err != nil {
		hint := "rerun with --keep to keep the databases for a look"
		if *keep {
			hint = "the databases are kept: the SQLite files in " + dir + ", the PostgreSQL schemas and the Redis namespaces with " + o.run + " in their names"
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

// check validates the sizes and the URLs, and sets only and targets from the --only and
// --target values; an empty --target picks every target the URLs make available.
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
	if err := o.checkURLs(); err != nil {
		return err
	}
	available := []string{"library", "api"}
	if o.dbURL != "" {
		available = append(available, "postgres")
		if o.queueURL != "" {
			available = append(available, "postgres+redis")
		}
	}
	if targets == "" {
		o.targets = available
	} else {
		o.targets, err = pickNames("target", "target", targets, benchTargetNames, strings.ToLower,
			"use --target with library, api, postgres, postgres+redis and postgres+river separated by commas, e.g. --target api")
		if err != nil {
			return err
		}
	}
	for _, name := range o.targets {
		switch {
		case slices.Contains(available, name), name == "postgres+river" && o.dbURL != "":
		case o.dbURL == "":
			return usageErrorf("add --db postgres://USER@HOST:PORT/DATABASE?sslmode=disable", "bench: --target %s needs --db", name)
		default:
			return usageErrorf("add --queue redis://HOST:PORT/DB", "bench: --target %s needs --queue", name)
		}
	}
	if slices.Contains(o.only, "B2") && o.endpoints < 2 {
		return usageErrorf("use --endpoints 2 or more, or leave B2 out with --only B1,B3", "bench: B2 needs at least 2 endpoints, one of which never answers")
	}
	return nil
}

// checkURLs checks the form of --db and --queue; pingBenchBackends reaches them. Neither quotes
// a password.
func (o *benchOptions) checkURLs() error {
	if o.dbURL != "" {
		u, err := url.Parse(o.dbURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return usageErrorf("use --db postgres://USER[:PASSWORD]@HOST:PORT/DATABASE?sslmode=disable",
				"bench: --db %s is not a PostgreSQL URL", redactURL(o.dbURL))
		}
	}
	if o.queueURL != "" {
		u, err := url.Parse(o.queueURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return usageErrorf("use --queue redis://[USER:PASSWORD@]HOST:PORT[/DB], or rediss:// for TLS",
				"bench: --queue %s is not a Redis URL", redactURL(o.queueURL))
		}
		if o.dbURL == "" {
			return usageErrorf("add --db postgres://USER@HOST:PORT/DATABASE?sslmode=disable: the Redis queue carries the jobs of a PostgreSQL store",
				"bench: --queue needs --db")
		}
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
	for i, t := range ts {
		if pt, ok := t.(*postgresTarget); ok {
			rep.Targets[i].Schemas, rep.Targets[i].Namespaces = pt.used()
		}
	}
	rep.Problems = rep.problems()
	return nil
}

// benchTarget is the system a benchmark measures; each run opens a fresh instance of it. The
// targets are the library embedded in this process and the HTTP API in front of it, each on a
// new SQLite file per run, and, with --db (and --queue), the library on PostgreSQL (with the
// Redis queue), each run in a new schema (and namespace).
type benchTarget interface {
	// name is the target's short name, as --target takes it and the report's columns show it.
	name() string
	// describe says what the target is, for the report.
	describe() string
	// targetSendsPerSec is B1's sends/s target through this target; 0: none.
	targetSendsPerSec() float64
	// targetDeliveriesPerSec is B1's deliveries/s target through this target.
	targetDeliveriesPerSec() float64
	// targetP50 is B3's p50 target through this target.
	targetP50() time.Duration
	// servers names the processes of this target's database and queue, outside this process,
	// whose CPU time and memory B1 reports (see sampleUsage); none for SQLite.
	servers() []string
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
	// close stops the instance and removes what the target does not keep (a PostgreSQL schema,
	// Redis keys; SQLite files stay where the target put them). An error says what is left.
	close() error
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
