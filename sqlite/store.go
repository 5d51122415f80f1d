// Package sqlite is hookd's embedded store: one SQLite file, opened through the pure-Go driver
// modernc.org/sqlite (no cgo), in WAL mode, holding hookd's tables and its queue of delivery
// jobs (hookd_jobs, see Queue), so that a message, its deliveries and their jobs commit in one
// transaction.
//
// # Schema
//
// Every table is prefixed hookd_. Times are INTEGER Unix microseconds, UTC, and read back as
// time.Time in UTC. Lists and maps (an endpoint's event types, channels, headers, metadata) are
// JSON text; an empty one is stored as NULL and reads back as nil. Payloads are stored byte for
// byte. A message's channels are also rows of hookd_message_channels, so that listing one
// channel's messages walks an index. Migrations are embedded and applied in order by Open, in one
// transaction, recorded in hookd_migrations. A file in which an earlier hookd kept its jobs in
// River's tables has them moved to hookd_jobs at Open.
//
// # Lists
//
// Every list pages by id through an index, so a page costs about a millisecond in a million rows
// (see TestListsAtScale). Two filters scan instead: a time bound that excludes the newest rows of
// a newest-first list (MessageFilter.Before on the first page: about 0.3 s past half a million
// messages; later pages, which carry an Iterator, are fast), and AttemptFilter.EventTypes (each
// attempt's message is checked: about 0.1 s for a rare event type in a million attempts).
//
// # Connections
//
// Writes go through one connection (SQLite has one writer; more connections only wait on its
// lock), so a transaction holds every writer: keep transactions short, and inside InTx or a
// wrapped transaction use only that transaction, never the Store or DB() (it would wait forever
// for the connection the transaction holds). InTx begins a request's transaction (a Send's)
// before the background ones waiting (hookd.BackgroundWrite: attempt records, job outcomes),
// which wait at most 50 ms behind requests. The Store's own reads and the queue's fetches go
// through four more connections, which WAL lets read beside the writer.
//
// One process at a time opens a file (Open takes an exclusive lock on <file>.lock; a second gets
// ErrLocked): the queue keeps which jobs are running in that process's memory.
//
// Apps may keep their own tables in the same file: begin a transaction on DB(), hand it to
// hookd's SendTx (WrapTx adapts it), and commit it.
//
// # Outages
//
// When the file cannot be written (the disk full, an I/O error, the file made read-only) a write
// fails with an error wrapping hookd.ErrUnavailable, which the API answers with 503, and its
// transaction is rolled back: nothing of it is written, and what was committed before stays
// intact. Reads go on. Once space returns or the permissions are fixed, writes succeed again on
// the same connections, and the queue's jobs run again by themselves (a job that failed meanwhile
// after its backoff, 1 s doubling up to a minute): no restart is needed. A file system that the
// kernel has remounted read-only after I/O errors is the exception: it needs an unmount and a
// check, so hookd is restarted after it. Open refuses a file it could only read (SQLite would open it
// read-only without a word) with an error wrapping ErrReadOnly, and a full disk with one wrapping
// hookd.ErrUnavailable, each saying what to check. See TestDiskFull, TestPageLimit,
// TestFileMadeImmutable, TestOpenReadOnly and TestOpenDiskFull.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"

	// The pure-Go SQLite driver, registered as "sqlite".
	msqlite "modernc.org/sqlite"

	"github.com/hookd/hookd"
)

// Config configures a Store. A nil *Config means every default.
type Config struct {
	// Logger receives the notices of hookd's migrations, and is the logger of the queue
	// NewQueue returns. Default: discard.
	Logger *slog.Logger
}

func (c *Config) withDefaults() *Config {
	out := Config{}
	if c != nil {
		out = *c
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &out
}

// Store is a hookd.Store in one SQLite file. It is safe for concurrent use.
type Store struct {
	queries
	db     *sql.DB
	logger *slog.Logger
	stmts  *statements
	lock   *processLock

	// rdb and rstmts serve the Store's own reads (not a Tx's): WAL lets readers run beside the one
	// writer, so the workers' loads do not queue for the connection that sends, records and the queue
	// write through.
	rdb    *sql.DB
	rstmts *statements
	path   string

	// queueRunning is set while a Queue of this store runs: one works the file's jobs.
	queueRunning atomic.Bool
	// gate orders InTx's transactions on the write connection.
	gate writeGate
}

var (
	_ hookd.Store                  = (*Store)(nil)
	_ hookd.InProcessStore         = (*Store)(nil)
	_ hookd.EndpointAttemptCounter = (*Store)(nil)
	_ hookd.MessageBatchReader     = (*Store)(nil)
	_ hookd.DeliveryCounter        = (*Store)(nil)
	_ hookd.EventTypeBatchReader   = (*Store)(nil)
)

// Open opens (creating it if needed) the SQLite database at path and brings its schema up to
// date. A file, or a directory, that this process may not write gives an error wrapping
// ErrReadOnly that says what to check; a disk too full to open or migrate the file gives one
// wrapping hookd.ErrUnavailable that says to check the file system.
func Open(ctx context.Context, path string, cfg *Config) (*Store, error) {
	cfg = cfg.withDefaults()
	lock, err := lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, readOnly(path, err))
	}
	if err := checkWritable(path); err != nil {
		lock.release()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	base, err := msqlite.NewConnector(dsn(path))
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db := sql.OpenDB(cachingConnector{base: base})
	db.SetMaxOpenConns(1)
	s := &Store{db: db, logger: cfg.Logger, lock: lock, path: path}
	if err := s.init(ctx); err != nil {
		if s.rdb != nil {
			_ = s.rdb.Close()
		}
		_ = db.Close()
		lock.release()
		return nil, fmt.Errorf("open sqlite %s: %w", path, openFault(path, err))
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if err := migrate(ctx, s.db, s.logger); err != nil {
		return err
	}
	stmts, err := prepareStatements(ctx, s.db)
	if err != nil {
		return err
	}
	s.stmts = stmts
	rbase, err := msqlite.NewConnector(readDSN(s.path))
	if err != nil {
		return fmt.Errorf("open readers: %w", err)
	}
	s.rdb = sql.OpenDB(cachingConnector{base: rbase})
	s.rdb.SetMaxOpenConns(readConns)
	// Every reader stays open when idle (database/sql keeps 2 by default): a connection closed
	// and opened again reads the schema and compiles its statements anew, which took 8 % of all
	// CPU in B1 through the API.
	s.rdb.SetMaxIdleConns(readConns)
	if s.rstmts, err = prepareStatements(ctx, s.rdb); err != nil {
		return fmt.Errorf("readers: %w", err)
	}
	s.queries = newQueries(s.rdb, nil, s.rstmts)
	return nil
}

// readConns is the number of read connections.
const readConns = 4

// readDSN is dsn for the read connections: their transactions take no write lock.
func readDSN(path string) string {
	return strings.Replace(dsn(path), "&_txlock=immediate", "&_txlock=deferred", 1)
}

// dsn builds the driver's connection string: the path as a file: URI (escaped, so that '?', '#'
// and '%' in it stay part of the name), with the pragmas every connection needs. _txlock=immediate
// makes every transaction take the write lock when it begins, so two writers queue on
// busy_timeout instead of failing to upgrade a read lock. temp_store(MEMORY) keeps statement
// journals in memory: a statement that writes many rows (a batch's deliveries or jobs) keeps the
// pages it changes in one until it ends, and past 64 KiB SQLite spills it to a temporary file,
// which cost a send about 30 write system calls.
func dsn(path string) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() +
		"?_pragma=busy_timeout(5000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(ON)" +
		"&_pragma=temp_store(MEMORY)" +
		"&_txlock=immediate"
}

// InProcess reports true: SQLite runs in this process (hookd.InProcessStore).
func (s *Store) InProcess() bool { return true }

// DB returns the database, for the app's own tables and for transactions to hand to SendTx.
func (s *Store) DB() *sql.DB { return s.db }

// Ping checks that the database answers a query, for a health check.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.rdb.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("ping sqlite: %w", unavailable(err))
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	var errs []error
	if s.stmts != nil {
		errs = append(errs, s.stmts.close())
	}
	if s.rstmts != nil {
		errs = append(errs, s.rstmts.close())
	}
	errs = append(errs, s.rdb.Close(), s.db.Close())
	errs = append(errs, s.lock.release())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sqlite: %w", err)
	}
	return nil
}

// InTx runs fn in a new transaction, committed when fn returns nil and rolled back otherwise (also
// when fn panics). When the file cannot be written (the disk full, an I/O error, the file made
// read-only) the error wraps hookd.ErrUnavailable: nothing of the transaction was written, and the
// same call succeeds once the cause is gone.
func (s *Store) InTx(ctx context.Context, fn func(tx hookd.Tx) error) (err error) {
	if err := s.gate.acquire(ctx, hookd.IsBackgroundWrite(ctx)); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	gateHeld := true
	defer func() {
		if gateHeld {
			s.gate.release()
		}
	}()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", unavailable(err))
	}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback()
		}
	}()
	t := s.wrap(sqlTx)
	if err := fn(t); err != nil {
		return unavailable(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", unavailable(err))
	}
	committed = true
	// The after-commit functions (a Redis enqueue) run once the next writer may go.
	gateHeld = false
	s.gate.release()
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// WrapTx adapts a *sql.Tx begun on DB(). Any other type gives hookd.ErrUnsupportedTx. The caller
// commits or rolls back.
func (s *Store) WrapTx(raw any) (hookd.Tx, error) {
	sqlTx, ok := raw.(*sql.Tx)
	if !ok || sqlTx == nil {
		return nil, fmt.Errorf("wrap transaction of type %T: %w", raw, hookd.ErrUnsupportedTx)
	}
	t := s.wrap(sqlTx)
	t.wrapped = true
	return t, nil
}

func (s *Store) wrap(sqlTx *sql.Tx) *txn {
	return &txn{queries: newQueries(sqlTx, sqlTx, s.stmts), sqlTx: sqlTx}
}

// txn is a hookd.Tx: the Reader methods of queries and the Writer methods, all on one *sql.Tx.
type txn struct {
	queries
	sqlTx *sql.Tx
	// onCommit runs after InTx commits: the queue wakes the lanes it enqueued into. A
	// transaction from WrapTx (wrapped) never runs it: the app commits it.
	onCommit []func()
	wrapped  bool
}

var _ hookd.AfterCommitter = (*txn)(nil)

// AfterCommit registers f to run after InTx commits the transaction; it reports false, and
// never runs f, for a wrapped transaction.
func (t *txn) AfterCommit(f func()) bool {
	if t.wrapped {
		return false
	}
	t.onCommit = append(t.onCommit, f)
	return true
}

var _ hookd.Tx = (*txn)(nil)

// Raw returns the *sql.Tx.
func (t *txn) Raw() any { return t.sqlTx }
