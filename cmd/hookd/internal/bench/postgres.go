package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/localclient"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/redisqueue"
)

// This file holds the bench's PostgreSQL targets: the library in this process on PostgreSQL,
// with the store's own queue or with the Redis queue, each run in a schema (and a Redis
// namespace) of its own that is removed afterwards.

// benchCleanupTimeout bounds what closing one run of a PostgreSQL target takes: stopping the
// client, dropping the schema, deleting the Redis keys.
const benchCleanupTimeout = 30 * time.Second

// postgresTarget is hookd embedded in this process, configured as the library target is, on a
// postgres.Store in a new schema per run ("bench_<run>_<target>_<benchmark>"), with the store's
// own queue (hookd_jobs, LISTEN/NOTIFY), with river River's (postgres.RiverQueue), or, with
// queueURL, a redisqueue.Queue in a new namespace per run ("hookd-bench-<run>-<target>-<benchmark>"). When a run ends its schema is dropped and its
// namespace's keys deleted, unless keep.
type postgresTarget struct {
	dbURL    string
	queueURL string // "": the store's own queue
	river    bool   // River's queue in place of the store's own
	run      string // the run's id, in every schema and namespace name
	keep     bool
	logger   *slog.Logger // nil: discard

	mu         sync.Mutex
	schemas    []string // created so far, in order
	namespaces []string
}

func (t *postgresTarget) name() string {
	switch {
	case t.queueURL != "":
		return "postgres+redis"
	case t.river:
		return "postgres+river"
	}
	return "postgres"
}

func (t *postgresTarget) describe() string {
	where := "PostgreSQL " + redact.URL(t.dbURL)
	if t.queueURL != "" {
		return "hookd library in this process (hookd.Client.Send) on " + where + " with the Redis queue at " + redact.URL(t.queueURL) +
			" (Config.Queue); a fresh schema and Redis namespace per run, removed afterwards"
	}
	if t.river {
		return "hookd library in this process (hookd.Client.Send) on " + where +
			" with River's queue (postgres.Store.NewRiverQueue, riverpgxv5, LISTEN/NOTIFY); a fresh schema per run, dropped afterwards"
	}
	return "hookd library in this process (hookd.Client.Send) on " + where +
		" with the store's own queue (hookd_jobs, LISTEN/NOTIFY); a fresh schema per run, dropped afterwards"
}

func (t *postgresTarget) targetSendsPerSec() float64 { return 0 }

func (t *postgresTarget) targetDeliveriesPerSec() float64 { return b1TargetPerSecPostgres }

func (t *postgresTarget) targetP50() time.Duration { return b3TargetP50Postgres }

func (t *postgresTarget) servers() []string {
	if t.queueURL != "" {
		return []string{"postgres", "redis-server"}
	}
	return []string{"postgres"}
}

// short is the target's name in schema and namespace names.
func (t *postgresTarget) short() string {
	switch {
	case t.queueURL != "":
		return "pgredis"
	case t.river:
		return "pgriver"
	}
	return "pg"
}

// schemaUser is a target whose runs create PostgreSQL schemas (and Redis namespaces): the
// postgres targets and fleet. The report lists them.
type schemaUser interface {
	// used returns the schemas and namespaces the target's runs created so far.
	used() (schemas, namespaces []string)
}

// used returns the schemas and namespaces the target's runs created so far.
func (t *postgresTarget) used() (schemas, namespaces []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.schemas), slices.Clone(t.namespaces)
}

func (t *postgresTarget) open(ctx context.Context, name string, timeout time.Duration) (_ benchInstance, err error) {
	inst := strings.ReplaceAll(name, "-", "_")
	schema := "bench_" + t.run + "_" + t.short() + "_" + inst
	var ns string
	if t.queueURL != "" {
		ns = "hookd-bench-" + t.run + "-" + t.short() + "-" + name
	}
	t.mu.Lock()
	t.schemas = append(t.schemas, schema)
	if ns != "" {
		t.namespaces = append(t.namespaces, ns)
	}
	t.mu.Unlock()

	logger := t.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Whatever happens from here on, what was created goes.
	var (
		store  *postgres.Store
		queue  *redisqueue.Queue
		client *hookd.Client
	)
	cleanup := func() error {
		cctx, cancel := context.WithTimeout(context.Background(), benchCleanupTimeout)
		defer cancel()
		var errs []error
		if client != nil {
			if err := client.Stop(cctx); err != nil {
				errs = append(errs, err)
			}
		}
		if queue != nil {
			if err := queue.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if store != nil {
			if err := store.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if !t.keep {
			errs = append(errs, t.deleteNamespace(cctx, ns), t.dropSchema(cctx, schema))
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("open %s: %w", name, err), cleanup())
		}
	}()

	store, err = postgres.Open(ctx, t.runURL(), &postgres.Config{Logger: logger, Schema: schema})
	if err != nil {
		return nil, err
	}
	cfg := localclient.Config(timeout)
	cfg.Logger = logger
	// hookd.Config's default, set here to size the Redis queue as the store's own is sized.
	cfg.JobTimeout = cfg.Delivery.WithDefaults().Timeout + 30*time.Second
	if ns != "" {
		queue, err = redisqueue.New(t.queueURL, store, &hookd.QueueConfig{JobTimeout: cfg.JobTimeout},
			&redisqueue.Config{Logger: logger, Namespace: ns})
		if err != nil {
			return nil, err
		}
		cfg.Queue = queue
	}
	if t.river {
		if cfg.Queue, err = store.NewRiverQueue(ctx, &hookd.QueueConfig{JobTimeout: cfg.JobTimeout}); err != nil {
			return nil, err
		}
	}
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	client = c
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "bench " + name, UID: "bench-" + name})
	if err != nil {
		return nil, err
	}
	return &embeddedInstance{c: c, stop: cleanup, app: app.ID}, nil
}

// appName is the application_name of the run's connections.
func (t *postgresTarget) appName() string { return "hookd-bench-" + t.run + "-" + t.short() }

// runURL is dbURL with an application_name of the run's own, so that runBackends can tell the
// backends that serve the run's connections from the server's others.
func (t *postgresTarget) runURL() string {
	u, err := url.Parse(t.dbURL)
	if err != nil {
		return t.dbURL // checkURLs parsed it
	}
	q := u.Query()
	q.Set("application_name", t.appName())
	u.RawQuery = q.Encode()
	return u.String()
}

// runBackends returns the pids of the PostgreSQL backends of the run's connections, and of the
// server's own processes.
func (t *postgresTarget) runBackends(ctx context.Context) (string, []int, []int, bool) {
	return backendsNamed(ctx, t.dbURL, t.appName())
}

// backendsNamed returns the pids of the backends of the server at dbURL whose connections have
// the application_name appName, and those of the server's own processes, which serve every
// client (pg_stat_activity's rows that are not a client backend: WAL writer, checkpointer,
// background writer, autovacuum).
func backendsNamed(ctx context.Context, dbURL, appName string) (string, []int, []int, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := connectDB(ctx, dbURL)
	if err != nil {
		return "", nil, nil, false
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid, application_name = $1 FROM pg_stat_activity
		WHERE application_name = $1 OR backend_type <> 'client backend'`, appName)
	if err != nil {
		return "", nil, nil, false
	}
	var run, shared []int
	var pid int32
	var ours bool
	_, err = pgx.ForEachRow(rows, []any{&pid, &ours}, func() error {
		if ours {
			run = append(run, int(pid))
		} else {
			shared = append(shared, int(pid))
		}
		return nil
	})
	if err != nil {
		return "", nil, nil, false
	}
	return "postgres", run, shared, true
}

// dropSchema drops schema and everything in it, through a connection of its own.
func (t *postgresTarget) dropSchema(ctx context.Context, schema string) error {
	return dropBenchSchema(ctx, t.dbURL, schema)
}

// dropBenchSchema drops schema of the database at dbURL and everything in it.
func dropBenchSchema(ctx context.Context, dbURL, schema string) error {
	conn, err := connectDB(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	return nil
}

// deleteNamespace deletes the asynq queues of namespace ns and every key that names it; "" is
// none.
func (t *postgresTarget) deleteNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return nil
	}
	rdb, err := benchRedisClient(t.queueURL)
	if err != nil {
		return fmt.Errorf("delete Redis namespace %s: %w", ns, err)
	}
	defer rdb.Close()
	var errs []error
	insp := asynq.NewInspectorFromRedisClient(rdb)
	for _, lane := range []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual} {
		if err := insp.DeleteQueue(redisqueue.QueueName(ns, lane), true); err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			errs = append(errs, err)
		}
	}
	// DeleteQueue leaves the queues' statistics; the namespace is unique to the run.
	keys, err := benchNamespaceKeys(ctx, rdb, ns)
	if err == nil && len(keys) > 0 {
		err = rdb.Unlink(ctx, keys...).Err()
	}
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("delete Redis namespace %s: %w", ns, err)
	}
	return nil
}

// benchNamespaceKeys returns every key whose name holds ns.
func benchNamespaceKeys(ctx context.Context, rdb *redis.Client, ns string) ([]string, error) {
	var keys []string
	iter := rdb.Scan(ctx, 0, "*"+ns+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	return keys, iter.Err()
}

// benchRedisClient returns a client of the Redis at url.
func benchRedisClient(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", redact.URL(url), err)
	}
	return redis.NewClient(opt), nil
}

// pingBenchBackends checks that the PostgreSQL and Redis servers the targets use answer.
func pingBenchBackends(ctx context.Context, o *Options) error {
	pg := o.DBURL != "" && slices.ContainsFunc(o.Targets, func(t string) bool { return strings.HasPrefix(t, "postgres") || t == "serve-postgres" || t == "fleet" })
	if !pg {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := connectDB(ctx, o.DBURL)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		return fmt.Errorf("--db %s: %w", redact.URL(o.DBURL), err)
	}
	if !slices.Contains(o.Targets, "postgres+redis") {
		return nil
	}
	rdb, err := benchRedisClient(o.QueueURL)
	if err == nil {
		err = rdb.Ping(ctx).Err()
		rdb.Close()
	}
	if err != nil {
		return fmt.Errorf("--queue %s: %w", redact.URL(o.QueueURL), err)
	}
	return nil
}

// newBenchRunID returns 8 random hex digits that name a run's schemas and namespaces.
func newBenchRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// connectDB opens one connection to the database of url, as the store's pool would: the pool's
// own parameters (pool_max_conns and the like), which the server would refuse, are left out.
func connectDB(ctx context.Context, url string) (*pgx.Conn, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, pc.ConnConfig)
}
