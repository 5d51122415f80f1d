// Package postgres is hookd's store on PostgreSQL, through pgx (a pgxpool.Pool), with its own
// queue in the same database (Queue, the hookd_jobs table): a message, its deliveries and their
// jobs commit in one transaction, and several hookd processes may share one database. River
// (riverpgxv5) is there too, for an app that wants it (NewRiverQueue), which creates River's
// tables; the store alone has none of them.
//
// # Schema
//
// Every table is prefixed hookd_. Times are timestamptz and read back in UTC, to the
// microsecond. Lists and maps (an endpoint's event types, channels, headers, metadata) are
// jsonb; an empty one is stored as NULL and reads back as nil. An event type's schemas are json,
// kept byte for byte; payloads and stored response bodies are bytea, byte for byte. Ids are
// text COLLATE "C", so that lists page in bytewise id order whatever the database's collation.
// A message's channels are also rows of hookd_message_channels, so that listing one channel's
// messages walks an index.
//
// Open (and Migrate) applies hookd's embedded migrations in order, in one transaction, recorded
// in hookd_migrations, under a PostgreSQL advisory lock: processes that start at once migrate
// once. NewRiverQueue applies River's (rivermigrate) under the same lock. With Config.Schema
// every table lives in that schema, created if missing, and the pool's connections have it as
// their search_path.
//
// # Transactions
//
// InTx runs in a pgx transaction of the store's pool, at the database's default isolation
// (READ COMMITTED unless configured otherwise; InsertMessage's handling of a concurrent duplicate
// event id relies on it). Apps enqueue in their own transactions through hookd's SendTx: WrapTx
// takes a pgx.Tx (of the store's pool, or of any pgx connection to the database) or a *sql.Tx
// of pgx's database/sql driver (github.com/jackc/pgx/v5/stdlib: sql.Open("pgx", url) or
// stdlib.OpenDBFromPool). A connection other than the store's must have the same search_path
// (with Config.Schema: add search_path=<schema> to its URL), since hookd's and River's
// statements name their tables without a schema. As in any PostgreSQL transaction, a statement
// that fails (a conflict) aborts the transaction: roll it back.
//
// # Pool
//
// The pool is sized by the URL's pool_max_conns and the other pool_ parameters pgxpool reads;
// without pool_max_conns, by Config.MaxConns. A running queue keeps one connection of its own for
// LISTEN, outside the pool.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hookd/hookd"
)

// Config configures a Store. A nil *Config means every default.
type Config struct {
	// Logger receives the notices of the migrations, and is the logger of the queue NewQueue
	// returns. Default: discard.
	Logger *slog.Logger
	// Schema puts every table, hookd's and River's, in this schema (created if missing) by
	// setting it as the search_path of the pool's connections. Letters, digits and '_', not
	// starting with a digit, at most 63. Default: "", the URL's search_path (normally public).
	Schema string
	// MaxConns bounds the pool's connections when the URL has no pool_max_conns. Default: 4 per
	// CPU, at least 16.
	MaxConns int
	// Tracer, when set, traces every statement and batch of the store's connections, the
	// queue's included (pgx's tracelog, an OpenTelemetry tracer; a pgx.BatchTracer sees each
	// batch as one). Default: nil, no tracing.
	Tracer pgx.QueryTracer
}

func (c *Config) withDefaults() *Config {
	out := Config{}
	if c != nil {
		out = *c
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if out.MaxConns == 0 {
		out.MaxConns = max(16, 4*runtime.GOMAXPROCS(0))
	}
	return &out
}

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func (c *Config) validate() error {
	if c.Schema != "" && !schemaName.MatchString(c.Schema) {
		return &hookd.ValidationError{Field: "Config.Schema", Reason: fmt.Sprintf("%q is not a plain identifier; use letters, digits and '_', not starting with a digit, at most 63", c.Schema)}
	}
	if c.MaxConns < 0 {
		return &hookd.ValidationError{Field: "Config.MaxConns", Reason: fmt.Sprintf("is %d; use a positive number, or zero for the default", c.MaxConns)}
	}
	return nil
}

// poolConfig parses url (postgres://, postgresql://, or pgx's key=value form) into a pool
// configuration with cfg applied. Errors never carry the password.
func poolConfig(url string, cfg *Config) (*pgxpool.Config, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		pc.MaxConns = int32(min(cfg.MaxConns, 1<<20))
	}
	if cfg.Tracer != nil {
		pc.ConnConfig.Tracer = cfg.Tracer
	}
	if cfg.Schema != "" {
		pc.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{cfg.Schema}.Sanitize()
	}
	return pc, nil
}

// Store is a hookd.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	queries
	pool   *pgxpool.Pool
	logger *slog.Logger
	// sqlDB is the pool seen through database/sql, for River's inserts in an app's *sql.Tx.
	sqlDB *sql.DB
	// schema is the schema hookd's tables are in (current_schema() of the pool's connections).
	schema string
	// asyncPool runs the queue's claims and outcomes with synchronous_commit off.
	asyncPool *pgxpool.Pool
}

var (
	_ hookd.Store                  = (*Store)(nil)
	_ hookd.WorkBatchLoader        = (*Store)(nil)
	_ hookd.EndpointAttemptCounter = (*Store)(nil)
	_ hookd.MessageBatchReader     = (*Store)(nil)
	_ hookd.DeliveryCounter        = (*Store)(nil)
	_ hookd.EventTypeBatchReader   = (*Store)(nil)
)

// Open connects to the database at url (postgres://USER:PASSWORD@HOST:PORT/DATABASE?...) and
// brings hookd's schema up to date.
func Open(ctx context.Context, url string, cfg *Config) (*Store, error) {
	cfg = cfg.withDefaults()
	pc, err := poolConfig(url, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := migrate(ctx, pool, cfg); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: read the schema: %w", err)
	}
	// The queue's own statements (claims, outcomes, notifications) commit without waiting for the
	// WAL flush: one lost in a crash makes a job run again, which its handler drops when the
	// attempt is recorded (attempts commit synchronously). Measured: with two worker processes,
	// claims and outcomes waiting on their flushes were most of PostgreSQL's waits.
	apc := pc.Copy()
	apc.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	// These statements take a few rows each, by key: plans that read a whole table or sort it are
	// priced out. (The plans cached on an almost empty job table, with no statistics, sorted or
	// hashed a sequential scan of the whole table, and kept doing so as the table grew: measured
	// on B1, a thousand scans of the whole table, dead rows included, in a run.)
	// TestHotStatementsNeverScanWholeTables checks the plans.
	for _, p := range queuePlanParams {
		apc.ConnConfig.RuntimeParams[p] = "off"
	}
	apc.MaxConns, apc.MinConns = queueConns, 0
	asyncPool, err := pgxpool.NewWithConfig(ctx, apc)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s := &Store{
		schema:    schema,
		queries:   newQueries(pgxConn{pool}),
		pool:      pool,
		asyncPool: asyncPool,
		logger:    cfg.Logger,
		sqlDB:     stdlib.OpenDBFromPool(pool),
	}
	s.warnAutovacuum(ctx) // autovacuum.go
	return s, nil
}

// queueConns bounds the connections of the queue's own statements.
const queueConns = 8

// queuePlanParams are the planner settings the queue's pool turns off (see Open).
var queuePlanParams = []string{"enable_seqscan", "enable_sort", "enable_hashjoin", "enable_mergejoin"}

// Pool returns the store's connection pool, for the app's own queries and for transactions to
// hand to SendTx.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers a query, for a health check.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping postgres: %w", unavailable(err))
	}
	return nil
}

// Close closes the pool, once every connection taken from it is given back. Stop the queue
// first.
func (s *Store) Close() error {
	err := s.sqlDB.Close()
	s.asyncPool.Close()
	s.pool.Close()
	if err != nil {
		return fmt.Errorf("close postgres: %w", err)
	}
	return nil
}

// InTx runs fn in a new transaction, committed when fn returns nil and rolled back otherwise (also
// when fn panics). Functions given to the transaction's AfterCommit run after the commit.
//
// The transaction's statements are pipelined on one connection of the pool (pipeConn): BEGIN
// goes with the first, and writes held by HoldWrites go with COMMIT. Its Raw is a pgx.Tx on that
// connection, begun when first asked for.
//
// It waits for a connection of the pool until hookd.BeginContext(ctx) ends; a wait that ends
// first wraps hookd.ErrWriterBusy.
func (s *Store) InTx(ctx context.Context, fn func(tx hookd.Tx) error) error {
	wait := hookd.BeginContext(ctx)
	pc, err := s.pool.Acquire(wait)
	if err != nil {
		var ce *pgconn.ConnectError // a connection being made when the wait ended: the database is unreachable
		if wait.Err() != nil && !errors.As(err, &ce) {
			return fmt.Errorf("begin transaction: %w: every connection of the pool stayed taken: %w", hookd.ErrWriterBusy, err)
		}
		return fmt.Errorf("begin transaction: %w", classify(err))
	}
	p := &pipeConn{c: pc, ctx: ctx}
	committed := false
	defer func() {
		if !committed {
			p.rollback(context.WithoutCancel(ctx))
		}
		pc.Release()
	}()
	t := &txn{queries: newQueries(p), pipe: p}
	if err := fn(t); err != nil {
		if p.rawErr != nil {
			return p.rawErr
		}
		return unavailable(err)
	}
	if err := p.commit(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", classify(err))
	}
	committed = true
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// WrapTx adapts a transaction the app began: a pgx.Tx (of the store's pool, or of another pgx
// connection to the database) or a *sql.Tx of pgx's database/sql driver. Any other type gives
// hookd.ErrUnsupportedTx. The app commits or rolls back; Raw returns raw as given.
func (s *Store) WrapTx(raw any) (hookd.Tx, error) {
	var c conn
	switch tx := raw.(type) {
	case pgx.Tx:
		c = pgxConn{tx}
	case *sql.Tx:
		if tx != nil {
			c = sqlConn{tx}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("wrap transaction of type %T (want pgx.Tx or *sql.Tx): %w", raw, hookd.ErrUnsupportedTx)
	}
	return &txn{queries: newQueries(c), raw: raw, wrapped: true}, nil
}

// queries runs statements on the pool (the Store's reads) or on one transaction (a Tx's reads
// and writes).
type queries struct {
	sharedReads // the reads written once in package sqlstore, on c
	c           conn
}

// txn is a hookd.Tx: the Reader methods of queries and the Writer methods, all on one
// transaction.
type txn struct {
	queries
	raw  any       // WrapTx's
	pipe *pipeConn // InTx's
	// onCommit runs after InTx commits. A transaction from WrapTx (wrapped) never runs it: the
	// app commits it.
	onCommit []func()
	wrapped  bool
}

var (
	_ hookd.Tx                 = (*txn)(nil)
	_ hookd.AfterCommitter     = (*txn)(nil)
	_ hookd.MessageBatchWriter = (*txn)(nil)
)

// AfterCommit registers f to run after InTx commits the transaction; it reports false, and never
// runs f, for a wrapped transaction.
func (t *txn) AfterCommit(f func()) bool {
	if t.wrapped {
		return false
	}
	t.onCommit = append(t.onCommit, f)
	return true
}

// Raw returns the driver's transaction: a pgx.Tx for InTx's (see pipeConn.rawTx), or what
// WrapTx was given.
func (t *txn) Raw() any {
	if t.pipe != nil {
		return t.pipe.rawTx()
	}
	return t.raw
}

// HoldWrites holds the transaction's writes from now on for its commit (InTx's; a wrapped
// transaction runs them at once).
func (t *txn) HoldWrites() {
	if t.pipe != nil {
		t.pipe.holding = true
	}
}
