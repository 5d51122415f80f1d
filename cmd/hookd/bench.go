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

const benchUsage = `bench [fill|scale] [--messages N] [--endpoints N] [--producers N] [--only B1,B2,B3,B4]
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

"hookd bench fill" fills a database to a year-of-data shape and "hookd bench scale"
times every list and page on it against a small one: see "hookd bench fill --help" and
"hookd bench scale --help".

Exit code 1 when a delivery is missing, unverified or duplicated, or a run fails;
a missed target is reported, not an error.`

const benchFillUsage = `bench fill --db sqlite:PATH|postgres://... [--schema NAME] [--messages N] [--days N]
             [--seed N] [--producers N] [--json]

Fills the database through hookd's real send path (hookd.Client.Send, batched by hookd
across --producers concurrent producers, the store's own queue, the workers delivering to
receivers on 127.0.0.1 in this process) to --messages messages of a realistic shape:
100 applications of Zipf sizes (the largest gets about 15.6 % of the messages), 345
endpoints (some with event-type filters, some with a channel), 20 event types, 30 % of
the messages on a channel, 25 % tagged, about 3 deliveries per message. The receivers
answer 200, except 3 % of attempts at random and every attempt of 0.5 % of deliveries
(HTTP 500): so there are retries (50ms,200ms,1s) and failed deliveries. The client's
clock (Config.Now) runs from --days days before the fill began to then as the messages
are made, so creation times, and the ids that sort by them, spread over the span.
A PostgreSQL database that does not exist is created; --schema puts hookd's tables in a
schema of their own (serve then needs ?search_path=NAME in its --db).

Stopping it (Ctrl-C) ends the sends, lets the deliveries in flight settle and reports:
every message is written whole or not at all. Run it again on the same database to
continue: it reads its clock, seed and receiver port back from the largest
application's metadata, and sends until the database holds --messages messages.

It reports the fill rate (messages/s), the counts (messages, deliveries, attempts,
failed), and the database's size (SQLite: file and WAL; PostgreSQL: pg_database_size and
pg_total_relation_size of each table) and bytes per message.`

// runBench handles "hookd bench": it maps the flags onto bench.Options, runs them and prints the
// report as text or, with --json, as JSON.
func runBench(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "fill":
			return runBenchFill(ctx, e, args[1:])
		case "scale":
			return runBenchScale(ctx, e, args[1:])
		}
	}
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

// runBenchFill handles "hookd bench fill".
func runBenchFill(ctx context.Context, e *env, args []string) error {
	o := bench.DefaultFillOptions()
	f := newFlags(e, "bench fill", benchFillUsage)
	f.StringVar(&o.DB, "db", "", "the database to fill: sqlite:`PATH` or postgres://USER@HOST:PORT/DATABASE (created if missing)")
	f.StringVar(&o.Schema, "schema", "", "PostgreSQL: the `SCHEMA` hookd's tables go in (created if missing; default: the URL's search_path)")
	f.IntVar(&o.Messages, "messages", o.Messages, "the messages the database holds at the end")
	f.IntVar(&o.Days, "days", o.Days, "the days the creation times spread over, ending when the fill began")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "the seed of the shape: the same seed makes the same applications, endpoints and messages")
	f.IntVar(&o.Producers, "producers", o.Producers, "concurrent producers calling Send")
	asJSON := f.Bool("json", false, "print the report as JSON on stdout")
	if err := f.parse(args); err != nil {
		return err
	}
	if !*asJSON {
		o.Progress = e.stderr
	}
	o.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	rep, err := bench.Fill(ctx, o)
	if err != nil {
		return benchError(err)
	}
	return printBenchReport(e, *asJSON, rep, rep.Text())
}

// printBenchReport prints rep as indented JSON or text.
func printBenchReport(e *env, asJSON bool, rep any, text string) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err := io.WriteString(e.stdout, text)
	return err
}

const benchScaleUsage = `bench scale --db sqlite:PATH|postgres://... [--schema NAME] [--hookd-binary FILE]
             [--base-db sqlite:PATH|postgres://...] [--base-schema NAME] [--base-binary FILE]
             [--base-messages N] [--rounds N] [--json]

Times every list, filter, stats call and page of hookd on a full database (--db, filled
with "hookd bench fill") against the same on a baseline (--base-db), requests alternated
between the two: it starts two "hookd serve" children (of --hookd-binary and
--base-binary, default this binary; --retention none, loopback allowed, one admin token
through HOOKD_TOKEN), signs in to the dashboard with that token (POST /ui/login) and opens
the portal of the largest application with a portal link, then makes every request once
untimed and --rounds times timed on each server, the first server alternating by round.
The requests name the largest application (uid scale-000), its catch-all endpoint (the
busiest), its newest message and an attempt of it, a time an hour after its oldest message
(before=, to=) and an hour before its newest (after=, from=): the API lists (messages plain,
with before, after, event type, channel, tag; attempts of the endpoint plain, status=0,
status=2, by event type and channel; attempts of the message; attempted destinations and
messages; endpoint stats over 28 days), the gets, and the dashboard's and the portal's
pages (home, application with every status filter, endpoint, message, attempt, find).
It prints p50, p95 and p99 of each request on both servers and their ratio (full ÷ base),
as a table or, with --json, as JSON. Every answer must be 200 (exit 1 otherwise).

Without --base-db the baseline is a small database of the same shape: on SQLite a file in
a temporary directory, on PostgreSQL the database named as --db's with "_small" after it;
one that holds no messages is filled with --base-messages messages first.

Old build against new: make two copies of the full database (serve migrates a database to
its build's schema when it starts, so each build needs its own copy), then name both:
  cp full.db old.db && cp full.db new.db   (SQLite; with hookd stopped)
  psql -c 'CREATE DATABASE hookd_old TEMPLATE hookd_full' -c 'CREATE DATABASE hookd_new TEMPLATE hookd_full'
  hookd bench scale --db sqlite:new.db --hookd-binary ./hookd-new \\
      --base-db sqlite:old.db --base-binary ./hookd-old
The ratio column is then new ÷ old, each request alternated between the builds.`

// runBenchScale handles "hookd bench scale".
func runBenchScale(ctx context.Context, e *env, args []string) error {
	o := bench.DefaultScaleOptions()
	f := newFlags(e, "bench scale", benchScaleUsage)
	f.StringVar(&o.DB, "db", "", "the full database: sqlite:`PATH` or postgres://USER@HOST:PORT/DATABASE")
	f.StringVar(&o.Schema, "schema", "", "PostgreSQL: the `SCHEMA` of --db's tables")
	f.StringVar(&o.HookdBinary, "hookd-binary", "", "the hookd `BINARY` that serves --db (default: this one)")
	f.StringVar(&o.BaseDB, "base-db", "", "the baseline database (default: a small one of the same shape, filled if empty)")
	f.StringVar(&o.BaseSchema, "base-schema", "", "PostgreSQL: the `SCHEMA` of --base-db's tables")
	f.StringVar(&o.BaseBinary, "base-binary", "", "the hookd `BINARY` that serves --base-db (default: --hookd-binary)")
	f.IntVar(&o.BaseMessages, "base-messages", o.BaseMessages, "messages of the small database filled when --base-db holds none")
	f.IntVar(&o.Rounds, "rounds", o.Rounds, "timed rounds of every request on each server")
	asJSON := f.Bool("json", false, "print the report as JSON on stdout")
	if err := f.parse(args); err != nil {
		return err
	}
	if !*asJSON {
		o.Progress = e.stderr
	}
	o.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	rep, err := bench.Scale(ctx, o)
	if err != nil {
		return benchError(err)
	}
	if err := printBenchReport(e, *asJSON, rep, rep.Text()); err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return failf("", "bench scale: %s", strings.Join(rep.Problems, "; "))
	}
	return nil
}
