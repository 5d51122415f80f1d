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
// wrapped transaction use only that transaction, never the Store, DB() or a hookd.Client's Send
// (each waits for the connection the transaction holds: DB() until its context ends, the
// store's own writes until theirs ends and then fail with hookd.ErrWriterBusy). InTx begins a request's transaction (a Send's)
// before the background ones waiting (hookd.BackgroundWrite: attempt records, job outcomes),
// which wait at most 50 ms behind requests. The Store's own reads and the queue's fetches go
// through four more connections, which WAL lets read beside the writer.
//
// One process at a time opens a file (Open takes an exclusive lock on <file>.lock; a second gets
// ErrLocked): the queue keeps which jobs are running in that process's memory. Maintenance may
// open the file beside that process (see below).
//
// Apps may keep their own tables in the same file: begin a transaction on DB(), hand it to
// hookd's SendTx (WrapTx adapts it), and commit it.
//
// # Beside a running process
//
// Maintenance (a token rotated, the bus's dead letters listed or re-driven) need not wait for the
// process that holds the file to stop: Open with Config.Beside, finding the file held, opens it
// beside that process instead of failing. WAL lets two processes on one machine read and write
// one file (not over a network file system), each writer waiting its turn for the write lock (up
// to busy_timeout, 5 s). A store opened beside leaves to the holder what only the holder may do:
// it neither migrates the file nor moves River's jobs (the holder did both at its start), and it
// runs no queue (NewQueue fails with ErrBeside), so one queue at a time works a file. It opens only
// a file whose recorded migrations are exactly this build's, since its statements are this
// build's; another gives a *SchemaError (ErrSchemaDiffers) naming the migrations this build would
// apply (stop the holder: its start, or a later Open, applies them) or does not know (run the
// holder's release). Closing it leaves the holder's lock alone.
//
// # Backups
//
// Backup copies a database, held by a running process or not, to a new file through VACUUM INTO
// on a read-only connection of its own: one moment of the database, checked, synced, and named only
// once complete. A copy of the database file alone (cp) is not a backup while a process has it
// open: transactions committed to the -wal file and not yet checkpointed into the database are
// missing from it, and a file copied while it is written may be torn.
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

	// Beside lets Open, when another process holds the file (where Open fails with ErrLocked),
	// open it beside that process for maintenance instead: a token rotated, the bus's dead
	// letters listed or re-driven. Such a store neither migrates the file nor moves River's jobs,
	// and runs no queue (NewQueue fails with ErrBeside), so do not give it to a hookd.Client; it
	// opens only a file that exists and whose recorded migrations are exactly this build's
	// (else a *SchemaError). When no process holds the file, Open takes it as usual, Beside or
	// not. Default: false.
	Beside bool
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

	// beside is set when the store was opened beside the process that holds the file
	// (Config.Beside): lock is nil, and it runs no queue.
	beside bool

	// queueRunning is set while a Queue of this store runs: one works the file's jobs.
	queueRunning atomic.Bool
	// gate orders InTx's transactions on the write connection.
	gate writeGate
	// retention is the retention cleaner's state (retention_store.go).
	retention retentionState
	// connWait is set while the gate's holder waits for the write connection, which then only
	// a transaction begun on DB() can hold.
	connWait atomic.Bool
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
// date. A file held by another process gives an error wrapping ErrLocked, unless cfg.Beside
// (see there). A file, or a directory, that this process may not write gives an error wrapping
// ErrReadOnly that says what to check; a disk too full to open or migrate the file gives one
// wrapping hookd.ErrUnavailable that says to check the file system.
func Open(ctx context.Context, path string, cfg *Config) (*Store, error) {
	cfg = cfg.withDefaults()
	lock, err := lockFile(path)
	beside := false
	switch {
	case err == nil:
	case cfg.Beside && errors.Is(err, ErrLocked):
		beside = true
	default:
		return nil, fmt.Errorf("open sqlite %s: %w", path, readOnly(path, err))
	}
	if err := checkWritable(path); err != nil {
		lock.release()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	conn := dsn(path)
	if beside {
		conn = besideDSN(path)
	}
	base, err := msqlite.NewConnector(conn)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db := sql.OpenDB(cachingConnector{base: base})
	db.SetMaxOpenConns(1)
	s := &Store{db: db, logger: cfg.Logger, lock: lock, path: path, beside: beside}
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
	if s.beside {
		if err := checkSchemaBeside(ctx, s.db); err != nil {
			return err
		}
	} else if err := migrate(ctx, s.db, s.logger); err != nil {
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

// readOnlyDSN is for a connection that only reads the file at path: it never creates the file,
// never checkpoints the WAL or writes the file (even when it is the last to close), and beside a
// process writing the file it reads the last commit.
func readOnlyDSN(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
}

// dsn builds the driver's connection string: the path as a file: URI (escaped, so that '?', '#'
// and '%' in it stay part of the name), with the pragmas every connection needs. _txlock=immediate
// makes every transaction take the write lock when it begins, so two writers queue on
// busy_timeout instead of failing to upgrade a read lock. temp_store(MEMORY) keeps statement
// journals in memory: a statement that writes many rows (a batch's deliveries or jobs) keeps the
// pages it changes in one until it ends, and past 64 KiB SQLite spills it to a temporary file,
// which cost a send about 30 write system calls. journal_size_limit(64 MiB) cuts the -wal file
// back once a checkpoint has emptied it: while a long read (a Backup) holds its snapshot, the
// WAL cannot start over and grows with every commit (795 MiB during a 14 s backup beside 800
// sends/s, BenchmarkBackupBesideSends), and SQLite keeps a WAL file's size otherwise.
func dsn(path string) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() +
		"?_pragma=busy_timeout(5000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(ON)" +
		"&_pragma=temp_store(MEMORY)" +
		"&_pragma=journal_size_limit(67108864)" +
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
//
// It waits for its turn and for the write connection until hookd.BeginContext(ctx) ends; a wait
// that ends first wraps hookd.ErrWriterBusy. Once no transaction of the store's own holds the
// connection, only one begun on DB() can: the error then says so.
func (s *Store) InTx(ctx context.Context, fn func(tx hookd.Tx) error) (err error) {
	wait := hookd.BeginContext(ctx)
	if err := s.gate.acquire(wait, hookd.IsBackgroundWrite(ctx)); err != nil {
		if s.connWait.Load() { // the transaction ahead waits for the connection
			return fmt.Errorf("begin transaction: %w: %s: %w", hookd.ErrWriterBusy, heldOutside, err)
		}
		return fmt.Errorf("begin transaction: waited for the store's other transactions: %w: %w", hookd.ErrWriterBusy, err)
	}
	gateHeld := true
	defer func() {
		if gateHeld {
			s.gate.release()
		}
	}()
	s.connWait.Store(true)
	conn, err := s.db.Conn(wait)
	s.connWait.Store(false)
	if err != nil {
		if wait.Err() != nil {
			return fmt.Errorf("begin transaction: %w: %s: %w", hookd.ErrWriterBusy, heldOutside, err)
		}
		return fmt.Errorf("begin transaction: %w", unavailable(err))
	}
	connHeld := true
	defer func() {
		if connHeld {
			_ = conn.Close()
		}
	}()
	sqlTx, err := conn.BeginTx(ctx, nil)
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
	connHeld = false
	_ = conn.Close()
	gateHeld = false
	s.gate.release()
	for _, f := range t.onCommit {
		f()
	}
	return nil
}

// heldOutside says what holds the write connection when none of the store's own transactions
// does (they take it in turn, through the gate).
const heldOutside = "a transaction open on this store's DB() holds its one write connection " +
	"(inside it use only that transaction: send with SendTx), or commit it first"

// WrapTx adapts a *sql.Tx begun on DB(). Any other type, and a *sql.Tx of another database (a
// PostgreSQL one, another SQLite file, another *sql.DB on this file), gives an error wrapping
// hookd.ErrUnsupportedTx that says to begin it on DB(); one already committed or rolled back
// gives sql.ErrTxDone. The caller commits or rolls back.
func (s *Store) WrapTx(raw any) (hookd.Tx, error) {
	sqlTx, ok := raw.(*sql.Tx)
	if !ok || sqlTx == nil {
		return nil, fmt.Errorf("wrap transaction of type %T: %w: begin it on this store's DB()", raw, hookd.ErrUnsupportedTx)
	}
	// A statement prepared on DB() binds to the transaction only when it was begun there; Close
	// reports why not, without a round trip or a statement run.
	if err := sqlTx.Stmt(s.stmts.getEndpointByID).Close(); err != nil {
		if errors.Is(err, sql.ErrTxDone) {
			return nil, fmt.Errorf("wrap transaction: %w", err)
		}
		return nil, fmt.Errorf("wrap transaction: %w: it is not of this store's database %s; begin it on this store's DB() (%v)", hookd.ErrUnsupportedTx, s.path, err)
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
