// Package riverqueue implements hookd.Queue on River (github.com/riverqueue/river), in the same
// database as the store, so a job commits or rolls back with the delivery it carries.
//
// A Queue is generic over River's driver transaction type: *sql.Tx with riversqlite today,
// pgx.Tx with riverpgxv5. River's tables must exist: run rivermigrate before Start.
//
// # Lanes
//
// Each hookd lane is its own River queue (QueueFirst, QueueRetry, QueueManual) with its own
// workers, so a backlog of retries never delays a first attempt. All jobs have one kind, JobKind.
//
// # Timing
//
// River moves a job inserted with a scheduled time to available only every 5 s, but makes a
// snooze or retry due within 5 s available at once, to be fetched at its lane's next poll; and it
// writes a job's outcome (a snooze too) in batches, up to 250 ms late. So a job is inserted
// available when its NotBefore is within 5 s, and scheduled 5 s before NotBefore otherwise. A
// worker that gets a job early snoozes it until a hold before NotBefore (300 ms plus two poll
// intervals of the lane: 500 ms for the first and manual lanes, 340 ms for the retry lane by
// default; or until 5 s before NotBefore when it is further away) and, fetched again within the
// hold, sleeps the rest in its worker slot. The handler is never called before NotBefore, and
// usually within a few milliseconds of it; the price is a worker slot held for at most the hold.
// A snooze asked by the handler lands up to about 250 ms plus a poll interval late when shorter
// than 5 s, and up to 5 s late when longer.
//
// # Crash recovery
//
// A job that was running when its process died stays running until River's rescuer takes it
// back, after JobTimeout plus about 30 s (and a leader elected, if the dead process led).
//
// The queue knows no store, so it cannot tell a pending delivery that has no job from one that
// needs none: postgres.RiverQueue gives such deliveries a job when it starts.
//
// # Results
//
// A handler that returns nil completes the job; a *hookd.SnoozeError snoozes it (no attempt
// used); any other error retries it after 1 s, 2 s, 4 s ... at most 1 min, for about a week
// before River gives up, so that a database outage loses no job.
//
// # Logging
//
// River's records go to the given logger at Warn and above only (River logs every retry at
// Info), or all of them when that logger is enabled at Debug. The queue itself logs a failed
// handler at Warn.
package riverqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
)

var _ hookd.Queue = (*Queue[*sql.Tx])(nil)

// rescueMargin is how much longer than JobTimeout a job may stay running before River's rescuer
// takes it back.
const rescueMargin = 30 * time.Second

// hardStopWait is how long Stop waits, once its context has ended and running jobs have been
// cancelled, for them to return.
const hardStopWait = 5 * time.Second

// ErrAlreadyStarted is returned by Start on a Queue that is running.
var ErrAlreadyStarted = errors.New("riverqueue: already started")

// Queue is a hookd.Queue on River. Create it with New.
type Queue[TTx any] struct {
	driver riverdriver.Driver[TTx]
	client *river.Client[TTx]
	worker *worker
	cfg    Config
	logger *slog.Logger

	mu      sync.Mutex // serializes Start and Stop
	started bool
}

// New builds a Queue on driver (riversqlite.New(db) for SQLite). qcfg sizes the lanes (nil:
// defaults); cfg, at most one, tunes River (nil or absent: defaults). logger receives the
// queue's and River's records (nil: slog.Default()). EnqueueTx works as soon as New returns;
// jobs are worked after Start.
func New[TTx any](driver riverdriver.Driver[TTx], qcfg *hookd.QueueConfig, logger *slog.Logger, cfg ...*Config) (*Queue[TTx], error) {
	if driver == nil {
		return nil, invalid("driver", "is nil; pass riversqlite.New(db) or riverpgxv5.New(pool)")
	}
	if len(cfg) > 1 {
		return nil, invalid("cfg", fmt.Sprintf("%d configs given; pass at most one", len(cfg)))
	}
	var c *Config
	if len(cfg) == 1 {
		c = cfg[0]
	}
	conf := c.withDefaults()
	if err := conf.validate(); err != nil {
		return nil, err
	}
	qs, err := resolveQueueConfig(qcfg)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}

	poll := map[hookd.Lane]time.Duration{
		hookd.LaneFirst:  conf.FirstPollInterval,
		hookd.LaneRetry:  conf.PollInterval,
		hookd.LaneManual: conf.PollInterval,
	}
	w := &worker{logger: logger, timeout: qs.jobTimeout, hold: make(map[string]time.Duration, len(lanes))}
	queues := make(map[string]river.QueueConfig, len(lanes))
	var maxHold time.Duration
	for _, l := range lanes {
		queues[l.queue] = river.QueueConfig{
			FetchCooldown:     conf.FetchCooldown,
			FetchPollInterval: poll[l.lane],
			MaxWorkers:        qs.workers[l.lane],
		}
		w.hold[l.queue] = holdFor(poll[l.lane])
		maxHold = max(maxHold, w.hold[l.queue])
	}
	// River's own limit on a job covers the hold before NotBefore; the handler gets JobTimeout.
	jobTimeout := qs.jobTimeout + maxHold
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, fmt.Errorf("riverqueue: add worker: %w", err)
	}

	client, err := river.NewClient(driver, &river.Config{
		FetchCooldown:        conf.FetchCooldown,
		FetchPollInterval:    conf.PollInterval,
		JobTimeout:           jobTimeout,
		Logger:               riverLogger(logger),
		MaxAttempts:          maxAttempts,
		Queues:               queues,
		RescueStuckJobsAfter: jobTimeout + rescueMargin,
		// Without a soft stop timeout, cancelling Start's context cancels running jobs at once;
		// with it, they get up to one job timeout to finish, which bounds them anyway.
		SoftStopTimeout: jobTimeout,
		Workers:         workers,
	})
	if err != nil {
		return nil, fmt.Errorf("riverqueue: new River client: %w", err)
	}
	return &Queue[TTx]{driver: driver, client: client, worker: w, cfg: conf, logger: logger}, nil
}

// EnqueueTx inserts jobs in tx, whose Raw() must be a TTx (*sql.Tx for SQLite); any other
// transaction gives an error wrapping hookd.ErrUnsupportedTx. The jobs are worked once tx
// commits, and never if it rolls back. It works before Start too.
func (q *Queue[TTx]) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if tx == nil {
		return fmt.Errorf("riverqueue: enqueue: nil transaction: %w", hookd.ErrUnsupportedTx)
	}
	raw, ok := tx.Raw().(TTx)
	if !ok {
		return fmt.Errorf("riverqueue: enqueue: transaction is %T, want %v: %w", tx.Raw(), reflect.TypeFor[TTx](), hookd.ErrUnsupportedTx)
	}
	now := time.Now()
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		if j.DeliveryID == "" {
			return fmt.Errorf("riverqueue: enqueue: job %d: %w", i, &hookd.ValidationError{Field: "DeliveryID", Reason: "is empty"})
		}
		params[i] = river.InsertManyParams{Args: argsOf(j), InsertOpts: insertOpts(j, now)}
	}
	if _, err := q.client.InsertManyFastTx(ctx, raw, params); err != nil {
		return fmt.Errorf("riverqueue: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// Start begins working jobs with h and returns. Cancelling ctx stops the queue as Stop does, with
// running jobs given up to the job timeout to finish.
//
// Do not call Start while holding a transaction on a single-connection database (SQLite): River's
// start needs the connection.
func (q *Queue[TTx]) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		select {
		case <-q.client.Stopped(): // stopped through Start's context; may start again
		default:
			return ErrAlreadyStarted
		}
	}
	q.worker.handler.Store(&h)
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("riverqueue: start: %w", err)
	}
	q.started = true
	return nil
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return (a job that
// returns its context's error goes back to available without using an attempt) and returns an
// error wrapping ctx's. No handler is called after Stop returns; one that ignores its context
// may still be running.
func (q *Queue[TTx]) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.client.Stop(ctx)
	if err == nil {
		q.started = false
		return nil
	}
	if ctx.Err() == nil {
		return fmt.Errorf("riverqueue: stop: %w", err)
	}
	hardCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hardStopWait)
	defer cancel()
	if err := q.client.StopAndCancel(hardCtx); err != nil {
		return fmt.Errorf("riverqueue: stop: jobs cancelled but still running after %s: %w", hardStopWait, errors.Join(ctx.Err(), err))
	}
	q.started = false
	return fmt.Errorf("riverqueue: stop: jobs in flight cancelled: %w", ctx.Err())
}
