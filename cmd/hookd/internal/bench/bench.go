// Package bench measures hookd's throughput and latency on fresh databases: the benchmarks B1,
// B2, B3 and B4 of "hookd bench", through each target (the library on SQLite, the HTTP API, the
// library on PostgreSQL with each queue, hookd serve as child processes on SQLite and
// PostgreSQL), against a verifying receiver in this process or, with Options.Apart, with the
// receiver and the senders in child processes of their own (the hidden "hookd bench receiver"
// and "hookd bench sender", RunReceiver and RunSender).
//
// Run takes Options (DefaultOptions, adjusted and checked with Check) and returns a Report,
// which prints as text (Report.Text) or as JSON as it is. cmd/hookd's bench command maps its
// flags onto Options and an *Error onto its exit codes.
package bench

import (
	"context"
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
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
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

// TargetNames are the targets Options.Targets may hold, in the order a run measures them. The
// postgres targets, serve-postgres and fleet need a DBURL, and postgres+redis a QueueURL too.
var TargetNames = []string{"library", "api", "postgres", "postgres+redis", "postgres+river", "serve", "serve-postgres", "fleet"}

// childTargets are the targets that run hookd as "hookd serve" child processes, the ones
// Options.Apart applies to.
var childTargets = []string{"serve", "serve-postgres", "fleet"}

// Benchmarks are the benchmarks Options.Only may hold, in the order a run measures them.
var Benchmarks = []string{"B1", "B2", "B3", "B4"}

// Options are the sizes and the targets of a run. The command line sets the fields down to
// Keep; tests shrink the rest.
type Options struct {
	Messages  int      // B1 messages; default 2000
	Endpoints int      // B1 endpoints; B2 endpoints, one of which hangs; default 10
	Producers int      // concurrent producers in B1 and B2; default 8
	Only      []string // the benchmarks to run, in order: a subset of Benchmarks; default all
	Targets   []string // the targets to measure, in order: a subset of TargetNames; default library, api
	DBURL     string   // PostgreSQL for the postgres targets; "": none
	QueueURL  string   // Redis for the postgres+redis target; "": none
	// CPUProfile is the file to write a CPU profile of the whole run to; "": none.
	CPUProfile string
	// Keep keeps the SQLite files, PostgreSQL schemas and Redis keys, and the report says where;
	// default false: each is removed after its run.
	Keep bool
	// FleetWorkers is the number of "hookd serve --role worker" processes of the fleet target;
	// default 2.
	FleetWorkers int
	// HookdBinary is the hookd binary the serve, serve-postgres and fleet targets start as hookd
	// serve; "": this process's executable.
	HookdBinary string
	// Apart runs the receiver and the senders of the serve, serve-postgres and fleet targets in
	// child processes of their own ("hookd bench receiver" and "hookd bench sender" of
	// ApartBinary), so that this process only orchestrates; the other targets of the run keep
	// them in this process. Default false.
	Apart bool
	// ApartBinary is the binary whose hidden "bench receiver" and "bench sender" commands
	// Apart starts; "": this process's executable. It may differ from HookdBinary, which an
	// older build may be.
	ApartBinary string

	B2Messages int           // B2 messages; default 200
	B2Timeout  time.Duration // B2's delivery timeout; default 1 s
	B3Sends    int           // B3 sends; default 100
	B4Messages int           // B4 messages to one ordered endpoint; default 500
	Stall      time.Duration // a run fails after this long without progress; default 30 s
	// RunID names this run in the PostgreSQL schemas and Redis namespaces it creates; default
	// random.
	RunID string

	Progress io.Writer    // where the progress line goes; nil: nowhere
	Logger   *slog.Logger // the PostgreSQL targets' warnings; nil: none
}

// DefaultOptions returns the sizes the issue sets.
func DefaultOptions() Options {
	return Options{
		Messages: 2000, Endpoints: 10, Producers: 8, Only: slices.Clone(Benchmarks),
		Targets:    []string{"library", "api"},
		B2Messages: 200, B2Timeout: time.Second, B3Sends: 100, B4Messages: 500, Stall: 30 * time.Second,
		RunID: newBenchRunID(), FleetWorkers: 2,
	}
}

// Error is a run that cannot start or did not finish, or a wrong option: Msg says what, Hint
// (may be empty) how to fix it. Usage marks a wrong option.
type Error struct {
	Usage bool
	Msg   string
	Hint  string
}

func (e *Error) Error() string { return e.Msg }

func usageErrorf(hint, format string, args ...any) error {
	return &Error{Usage: true, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

func failf(hint, format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// Run measures o.Only on every one of o.Targets, o as Check left it, and returns the report; args
// is the command line, which the report shows with its passwords hidden. A delivery missing,
// unverified or duplicated is in the report's Problems, not an error; a missed target is neither.
// Every error is an *Error.
func Run(ctx context.Context, o Options, args []string) (*Report, error) {
	// Reach the servers first: a wrong URL fails now, not after the SQLite targets' runs.
	if err := pingBenchBackends(ctx, &o); err != nil {
		return nil, failf("check that the server runs and that the URL is right", "bench: %v", err)
	}
	if o.CPUProfile != "" {
		pf, err := os.Create(o.CPUProfile)
		if err != nil {
			return nil, failf("check that the directory exists and is writable", "bench: --cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return nil, failf("", "bench: start the CPU profile: %v", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			pf.Close()
		}()
	}
	dir, err := os.MkdirTemp("", "hookd-bench-")
	if err != nil {
		return nil, failf("", "bench: %v", err)
	}
	if !o.Keep {
		defer os.RemoveAll(dir)
	}

	var ts []benchTarget
	for _, name := range o.Targets {
		switch name {
		case "library":
			ts = append(ts, &embeddedTarget{dir: dir})
		case "api":
			ts = append(ts, &apiTarget{dir: dir, producers: o.Producers})
		case "postgres":
			ts = append(ts, &postgresTarget{dbURL: o.DBURL, run: o.RunID, keep: o.Keep, logger: o.Logger})
		case "postgres+redis":
			ts = append(ts, &postgresTarget{dbURL: o.DBURL, queueURL: o.QueueURL, run: o.RunID, keep: o.Keep, logger: o.Logger})
		case "postgres+river":
			ts = append(ts, &postgresTarget{dbURL: o.DBURL, river: true, run: o.RunID, keep: o.Keep, logger: o.Logger})
		case "serve":
			ts = append(ts, &fleetTarget{label: name, sqliteDir: dir, bin: o.HookdBinary, producers: o.Producers, run: o.RunID, keep: o.Keep})
		case "serve-postgres":
			ts = append(ts, &fleetTarget{label: name, dbURL: o.DBURL, bin: o.HookdBinary, producers: o.Producers, run: o.RunID, keep: o.Keep})
		case "fleet":
			ts = append(ts, &fleetTarget{label: name, dbURL: o.DBURL, bin: o.HookdBinary, workers: o.FleetWorkers, producers: o.Producers, run: o.RunID, keep: o.Keep})
		}
	}
	rep := newReport(args, ts)
	rep.CPUProfile, rep.Apart = o.CPUProfile, o.Apart
	if o.DBURL != "" {
		rep.Run, rep.Keep = o.RunID, o.Keep
	}
	if err := runBenchmarks(ctx, ts, &o, rep); err != nil {
		hint := "rerun with --keep to keep the databases for a look"
		if o.Keep {
			hint = "the databases are kept: the SQLite files in " + dir + ", the PostgreSQL schemas and the Redis namespaces with " + o.RunID + " in their names"
		}
		return nil, failf(hint, "bench: %v", err)
	}
	if o.Keep {
		rep.Kept = keptFiles(dir)
	}
	return rep, nil
}

// Check validates the sizes and the URLs, and sets Only and Targets from the --only and
// --target values; an empty --target picks every target the URLs make available. A wrong value
// is an *Error with Usage set.
func (o *Options) Check(only, targets string) error {
	for _, v := range []struct {
		flag   string
		n, max int
	}{{"messages", o.Messages, 1_000_000}, {"endpoints", o.Endpoints, 1000}, {"producers", o.Producers, 1000}, {"b4-messages", o.B4Messages, 1_000_000}} {
		if v.n < 1 || v.n > v.max {
			return usageErrorf(fmt.Sprintf("use --%s between 1 and %d", v.flag, v.max), "bench: --%s %d is out of range", v.flag, v.n)
		}
	}
	var err error
	o.Only, err = pickNames("only", "benchmark", only, Benchmarks, strings.ToUpper,
		"use --only with B1, B2, B3 and B4 separated by commas, e.g. --only B1,B3")
	if err != nil {
		return err
	}
	if err := o.checkURLs(); err != nil {
		return err
	}
	available := []string{"library", "api"}
	if o.DBURL != "" {
		available = append(available, "postgres")
		if o.QueueURL != "" {
			available = append(available, "postgres+redis")
		}
	}
	if targets == "" {
		o.Targets = available
	} else {
		o.Targets, err = pickNames("target", "target", targets, TargetNames, strings.ToLower,
			"use --target with library, api, postgres, postgres+redis, postgres+river, serve, serve-postgres and fleet separated by commas, e.g. --target api")
		if err != nil {
			return err
		}
	}
	for _, name := range o.Targets {
		switch {
		case slices.Contains(available, name), name == "serve",
			(name == "postgres+river" || name == "serve-postgres" || name == "fleet") && o.DBURL != "":
		case o.DBURL == "":
			return usageErrorf("add --db postgres://USER@HOST:PORT/DATABASE?sslmode=disable", "bench: --target %s needs --db", name)
		default:
			return usageErrorf("add --queue redis://HOST:PORT/DB", "bench: --target %s needs --queue", name)
		}
	}
	if slices.Contains(o.Targets, "fleet") && (o.FleetWorkers < 1 || o.FleetWorkers > 64) {
		return usageErrorf("use --fleet-workers between 1 and 64", "bench: --fleet-workers %d is out of range", o.FleetWorkers)
	}
	if o.Apart && !slices.ContainsFunc(o.Targets, func(name string) bool { return slices.Contains(childTargets, name) }) {
		return usageErrorf("add --target serve, serve-postgres or fleet (hookd serve as child processes): --apart applies to those",
			"bench: --apart with no target that runs hookd serve")
	}
	if slices.Contains(o.Only, "B2") && o.Endpoints < 2 {
		return usageErrorf("use --endpoints 2 or more, or leave B2 out with --only B1,B3", "bench: B2 needs at least 2 endpoints, one of which never answers")
	}
	return nil
}

// checkURLs checks the form of --db and --queue; pingBenchBackends reaches them. Neither quotes
// a password.
func (o *Options) checkURLs() error {
	if o.DBURL != "" {
		u, err := url.Parse(o.DBURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return usageErrorf("use --db postgres://USER[:PASSWORD]@HOST:PORT/DATABASE?sslmode=disable",
				"bench: --db %s is not a PostgreSQL URL", redact.URL(o.DBURL))
		}
	}
	if o.QueueURL != "" {
		u, err := url.Parse(o.QueueURL)
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			return usageErrorf("use --queue redis://[USER:PASSWORD@]HOST:PORT[/DB], or rediss:// for TLS",
				"bench: --queue %s is not a Redis URL", redact.URL(o.QueueURL))
		}
		if o.DBURL == "" {
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
func runBenchmarks(ctx context.Context, ts []benchTarget, o *Options, rep *Report) error {
	for _, name := range o.Only {
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
			case "B4":
				tr.B4, err = runB4(ctx, t, o)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.name(), name, err)
			}
		}
	}
	for i, t := range ts {
		if pt, ok := t.(schemaUser); ok {
			rep.Targets[i].Schemas, rep.Targets[i].Namespaces = pt.used()
		}
	}
	rep.Problems = rep.problems()
	return nil
}

// benchTarget is the system a benchmark measures; each run opens a fresh instance of it. The
// targets are the library embedded in this process and the HTTP API in front of it, each on a
// new SQLite file per run, hookd serve as a child process on a new SQLite file (serve), and,
// with --db (and --queue), the library on PostgreSQL (with the Redis queue) and hookd serve
// processes on PostgreSQL (serve-postgres, fleet), each run in a new schema (and namespace).
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
	// addOrderedEndpoint is addEndpoint for an ordered endpoint (B4).
	addOrderedEndpoint(ctx context.Context, url string) (secret string, err error)
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
func addBenchEndpoint(ctx context.Context, inst benchInstance, recv receiver, path string, hang bool) error {
	secret, err := inst.addEndpoint(ctx, recv.url(path))
	if err != nil {
		return fmt.Errorf("create endpoint %s: %w", path, err)
	}
	return recv.expect(path, secret, hang)
}
