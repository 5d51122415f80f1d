package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/hookd/hookd/cmd/hookd/internal/bench"
)

const benchUsage = `bench [--messages N] [--endpoints N] [--producers N] [--only B1,B2,B3,B4]
             [--b4-messages N] [--db postgres://...] [--queue redis://...]
             [--target library,api,postgres,postgres+redis,postgres+river,serve,serve-postgres,fleet]
             [--fleet-workers N] [--apart] [--hookd-binary FILE] [--json] [--cpuprofile FILE] [--keep]

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
  serve           one "hookd serve" child process (of --hookd-binary, default this
                  binary) on a new SQLite file per run, with serve's defaults but
                  loopback allowed, no per-application quotas and B2's --timeout.
                  Setup, sends and counts go over HTTP to it, as for api; B1 shows its
                  CPU time and peak memory.
  serve-postgres  with --db: the same on PostgreSQL, in a new schema per run, dropped
                  afterwards.
  fleet           with --db: the same with one --role api process and --fleet-workers
                  --role worker processes (default 2).
--target defaults to every target that --db and --queue make available, except
postgres+river, serve, serve-postgres and fleet, which run only when named.
--apart runs the receiver and the producers of serve, serve-postgres and fleet in
child processes of their own (hidden "hookd bench receiver" and "hookd bench
sender" of this binary, driven over HTTP on 127.0.0.1), so that this process only
orchestrates; B3 and B4 send one message at a time from this process, timed to
the receiver child's verified arrival. The other targets of the run keep theirs in
this process, for comparison. B1 then also splits the whole machine's CPU time
(/proc/stat) between hookd, PostgreSQL, the receiver, the sender, the bench and
the rest of the machine (every target shows the split).
The benchmarks:
  B1  --messages messages, each fanned out to --endpoints endpoints, sent by --producers
      concurrent producers: sends/s, send latency, and deliveries/s from the first send
      to the last verified delivery (target 1,500/s on SQLite, 5,000/s on PostgreSQL;
      through the API also 1,000 sends/s). Also the CPU time per delivery of this
      process, of the hookd serve children, of --apart's receiver and sender, of the
      postgres and redis-server processes on this machine and of the whole machine
      (/proc/stat, split between them and the rest), and their peak memory.
  B2  200 messages to --endpoints endpoints of which one never answers (1 s timeout):
      time until every healthy delivery arrives, against the same run without the
      hanging endpoint (target: within 1.2x).
  B3  100 single sends in a row to one endpoint: p50/p99 from send to verified arrival
      (target: p50 within 20 ms on SQLite, 10 ms on PostgreSQL).
  B4  --b4-messages messages (default 500) in a row to one ordered endpoint, delivered one
      at a time in message order: deliveries/s and p50/p99 from send to verified arrival
      (no target: the cost of ordering, one round trip after another).
The receiver verifies every request with the official Standard Webhooks library; a
delivery counts only once verified. hookd runs with its default configuration, except
that loopback addresses are allowed (and B2's 1 s timeout). Without --apart the
receiver, the producers and, for the api target, the HTTP server share this process
and its CPUs with hookd, and count in its CPU time. With --keep the SQLite files, the PostgreSQL
schemas and the Redis keys stay, and the report says where.

Exit code 1 when a delivery is missing, unverified or duplicated, or a run fails;
a missed target is reported, not an error.`

// runBench handles "hookd bench": it maps the flags onto bench.Options, runs them and prints the
// report as text or, with --json, as JSON.
func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) == 1 {
		if child, ok := benchChildren[args[0]]; ok {
			return child(ctx, e)
		}
	}
	o := bench.DefaultOptions()
	f := newFlags(e, "bench", benchUsage)
	f.IntVar(&o.Messages, "messages", o.Messages, "B1: messages, each fanned out to every endpoint")
	f.IntVar(&o.Endpoints, "endpoints", o.Endpoints, "B1: endpoints; B2: endpoints, one of which never answers")
	f.IntVar(&o.Producers, "producers", o.Producers, "B1 and B2: concurrent producers calling Send")
	f.IntVar(&o.B4Messages, "b4-messages", o.B4Messages, "B4: messages to the ordered endpoint")
	only := f.String("only", strings.Join(o.Only, ","), "the benchmarks to run, comma-separated")
	f.StringVar(&o.DBURL, "db", "", "also measure hookd on the PostgreSQL database at `URL` (postgres://USER@HOST:PORT/DATABASE?sslmode=disable), in a new schema per run")
	f.StringVar(&o.QueueURL, "queue", "", "with --db, also measure it with the Redis queue at `URL` (redis://HOST:PORT/DB), in a new namespace per run")
	targets := f.String("target", "", "what to measure, comma-separated: library (the Go library), api (the HTTP API), postgres (the library on --db), postgres+redis (the same with --queue), postgres+river (the same with River's queue), serve (a hookd serve process on SQLite), serve-postgres (the same on --db), fleet (hookd serve processes on --db); default: every one the flags make available but postgres+river, serve, serve-postgres and fleet")
	f.IntVar(&o.FleetWorkers, "fleet-workers", o.FleetWorkers, "fleet: the number of hookd serve --role worker processes, 1 to 64")
	f.BoolVar(&o.Apart, "apart", false, "serve, serve-postgres and fleet: run the receiver and the senders in child processes of their own, and split the machine's CPU time between the processes")
	f.StringVar(&o.HookdBinary, "hookd-binary", "", "serve, serve-postgres and fleet: the hookd `BINARY` to run as hookd serve (default: this one); --apart's children are always this one")
	asJSON := f.Bool("json", false, "print the results as JSON on stdout, and nothing on stderr but errors")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof -top FILE)")
	f.BoolVar(&o.Keep, "keep", false, "keep the SQLite files, PostgreSQL schemas and Redis keys, and print where they are")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := o.Check(*only, *targets); err != nil {
		return benchError(err)
	}
	if !*asJSON {
		o.Progress = e.stderr
		o.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	rep, err := bench.Run(ctx, o, args)
	if err != nil {
		return benchError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if _, err := io.WriteString(e.stdout, rep.Text()); err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return failf("", "bench: %s", strings.Join(rep.Problems, "; "))
	}
	return nil
}

// benchError turns a *bench.Error into the exit error it stands for: a usage error for a wrong
// option, else a failure.
func benchError(err error) error {
	var be *bench.Error
	if !errors.As(err, &be) {
		return err
	}
	if be.Usage {
		return usageErrorf(be.Hint, "%s", be.Msg)
	}
	return failf(be.Hint, "%s", be.Msg)
}
