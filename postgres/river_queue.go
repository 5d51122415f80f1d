package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/riverqueue"
)

// River's fetch timing on PostgreSQL. With River's defaults (100 ms cooldown, 1 s poll) a lane
// works about 1,000 no-op jobs a second on the development machine; with these, 13,000 to
// 14,000. A job inserted in another process's transaction wakes the fetchers through LISTEN/NOTIFY;
// the first lane's poll bounds the wait when a notification is missed.
const (
	riverFetchCooldown     = 2 * time.Millisecond
	riverFirstPollInterval = 20 * time.Millisecond
)

// RiverQueue is a hookd.Queue on River (package riverqueue) with riverpgxv5 over the store's
// pool, in hookd's own lanes, in place of the store's own queue (Queue), for an app that runs
// River already; it costs more CPU a delivery than Queue (see docs/benchmarks.md, target
// postgres+river). Several processes may work one database's jobs: River's rescuer
// takes back, after the job timeout plus 30 s, a job whose process died (no rescue at start,
// which would take running jobs away from the other processes).
//
// EnqueueTx takes the store's transactions (InTx) and a wrapped pgx.Tx, inserting through
// riverpgxv5, and a wrapped *sql.Tx, inserting through a second River client on
// riverdatabasesql that only inserts (it is never started). Jobs inserted in a *sql.Tx wake no
// fetcher: the lanes' polls find them (every 20 ms for first attempts, 100 ms for the others).
type RiverQueue struct {
	s   *Store
	pgx *riverqueue.Queue[pgx.Tx]
	sql *riverqueue.Queue[*sql.Tx]
}

var _ hookd.Queue = (*RiverQueue)(nil)

// NewRiverQueue returns a River queue on the store's database, sized by cfg (nil: defaults),
// after it has brought River's tables (river_*) up to date: the store's own queue needs none, so
// Open leaves them to this. EnqueueTx works at once; jobs are worked after Start. Give it to
// hookd as Config.Queue.
func (s *Store) NewRiverQueue(ctx context.Context, cfg *hookd.QueueConfig) (*RiverQueue, error) {
	if err := migrateRiverLocked(ctx, s.pool, s.schema, s.logger); err != nil {
		return nil, fmt.Errorf("postgres river queue: %w", err)
	}
	rcfg := &riverqueue.Config{FetchCooldown: riverFetchCooldown, FirstPollInterval: riverFirstPollInterval}
	pq, err := riverqueue.New(riverpgxv5.New(s.pool), cfg, s.logger, rcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres river queue: %w", err)
	}
	sq, err := riverqueue.New(riverdatabasesql.New(s.sqlDB), cfg, s.logger, rcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres river queue: database/sql inserts: %w", err)
	}
	return &RiverQueue{s: s, pgx: pq, sql: sq}, nil
}

// EnqueueTx inserts jobs in tx: a transaction of the store's InTx, or one of WrapTx (pgx.Tx or
// *sql.Tx). Any other gives an error wrapping hookd.ErrUnsupportedTx.
func (q *RiverQueue) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if tx != nil {
		if sqlTx, ok := tx.Raw().(*sql.Tx); ok {
			if sqlTx == nil && len(jobs) > 0 {
				return fmt.Errorf("postgres queue: enqueue: nil *sql.Tx: %w", hookd.ErrUnsupportedTx)
			}
			return q.sql.EnqueueTx(ctx, tx, jobs)
		}
	}
	return q.pgx.EnqueueTx(ctx, tx, jobs)
}

// Start first gives a job to every pending delivery that has none in River's table (a database
// the store's own queue ran on, or restored from a dump; see Queue's repair, which this one
// mirrors), then begins working jobs with h (see riverqueue.Queue.Start).
func (q *RiverQueue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h != nil {
		if err := q.s.repairRiverJobs(ctx, q); err != nil {
			return fmt.Errorf("postgres river queue: start: %w", err)
		}
	}
	return q.pgx.Start(ctx, h)
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends (see
// riverqueue.Queue.Stop).
func (q *RiverQueue) Stop(ctx context.Context) error { return q.pgx.Stop(ctx) }
