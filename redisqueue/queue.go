// Package redisqueue implements hookd.Queue on Redis with asynq (github.com/hibiken/asynq), for
// installations whose workers run in several processes.
//
// Redis is outside the store's database, so a job cannot commit with the delivery it carries:
// EnqueueTx enqueues after the store's transaction commits (hookd.AfterCommitter), and a sweeper
// enqueues the pending deliveries whose enqueue never happened (a crash between the commit and
// the enqueue, a transaction the app committed itself through SendTx, Redis restarted empty).
// Every job has a task id of its own, "<delivery id>:<attempt>:<trigger>", and asynq refuses a
// second task with an id it holds, so a job enqueued after its commit and by the sweeper, or by
// the sweepers of two processes, is one task.
//
// # Lanes and namespaces
//
// Each hookd lane is an asynq queue, "<Namespace>:first", "<Namespace>:retry" and
// "<Namespace>:manual", worked by an asynq server of its own with the lane's workers, so a
// backlog of retries never delays a first attempt. asynq has no key prefix: the namespace is what
// keeps two installations on one Redis apart.
//
// # Timing
//
// asynq polls, with no way to wake a lane: a lane whose queue was empty looks again after
// FirstPollInterval (5 ms, the first-attempt lane) or PollInterval (20 ms) on average, between
// half and one and a half times the interval. A first attempt starts up to about 15 ms after its
// Send commits (11 ms on average when each Send waits for the previous attempt, with a local
// Redis). An idle process makes about 320 Redis calls a second: the polls, and two calls per lane
// every ForwardInterval.
//
// asynq keeps scheduled and retried tasks in sorted sets scored in whole Unix seconds, and
// forwards one (every ForwardInterval, 50 ms) once its second has begun, so up to a second early.
// A job with a NotBefore is therefore scheduled a lead (ForwardInterval, twice the longer poll
// interval and 10 ms: 100 ms by default) ahead of NotBefore, and a worker that gets it early holds it in its
// slot until NotBefore (at most 1.6 s by default; a job that comes earlier still, as from a clock
// that runs ahead, goes back to the schedule). The handler is never called before NotBefore, and
// usually within a few milliseconds of it.
//
// A snooze must not end early either, so a snoozed task is given back to asynq for the whole
// second at or after its end. When the snooze is at most 10 s, the process that snoozed it also
// moves it to its queue at the exact end (asynq's Inspector.RunTask), so it lands on time unless
// that process stops first.
//
// # Results
//
// A handler that returns nil finishes the job (asynq deletes the task: Retention 0); a
// *hookd.SnoozeError runs the same job again after the delay without counting a failure; any other
// error runs it again after 1 s, 2 s, 4 s ... at most 1 min (hookd.FailedJobDelay), for about a
// week before asynq archives the task.
//
// # Stopping and crashes
//
// Stop stops fetching, waits for the jobs in flight until its context ends, then cancels them; a
// cancelled job goes back to its queue without counting a failure and runs after a later Start.
// A process that dies with jobs in flight leaves their tasks active: asynq's recoverer, in any
// process of the namespace, gives them back once their lease (30 s, renewed every 5 s while the
// process lives) has been expired for 30 s, checking every minute: up to about 2 minutes.
package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/drain"
	"github.com/redis/go-redis/v9"
)

var _ hookd.Queue = (*Queue)(nil)

// Errors of Start.
var (
	// ErrAlreadyStarted is returned by Start on a Queue that is running.
	ErrAlreadyStarted = errors.New("redisqueue: already started")
	// ErrClosed is returned by Start on a Queue that was closed.
	ErrClosed = errors.New("redisqueue: closed")
)

const (
	// afterCommitTimeout bounds the enqueue of a committed transaction's jobs.
	afterCommitTimeout = 10 * time.Second
	// enqueueConcurrency is how many enqueues of one batch (a transaction's jobs, a sweep's page)
	// are sent at once: asynq enqueues one task per Redis call.
	enqueueConcurrency = 16
)

// Queue is a hookd.Queue on Redis. Create it with New; Close it when done.
type Queue struct {
	rdb       redis.UniversalClient
	client    *asynq.Client
	inspector *asynq.Inspector
	store     hookd.Store
	cfg       Config
	workers   map[hookd.Lane]int
	tm        timing
	logger    *slog.Logger
	redisURL  string // redacted, for messages

	mu     sync.Mutex // serializes Start, Stop and Close
	run    *run       // the running queue; nil when stopped
	closed bool
}

// New returns a Queue on the Redis at redisURL (redis://[user[:password]@]host[:port][/db],
// rediss://... for TLS, verified against the URL's host; the query options db, dial_timeout,
// read_timeout, write_timeout, pool_size and skip_verify). store is the store whose deliveries
// the jobs carry: the sweeper reads its pending deliveries. qcfg sizes the lanes (nil: defaults);
// cfg needs a Namespace. New does not reach Redis (Start does); EnqueueTx works as soon as New
// returns, and jobs are worked after Start.
func New(redisURL string, store hookd.Store, qcfg *hookd.QueueConfig, cfg *Config) (*Queue, error) {
	if store == nil {
		return nil, invalid("store", "is nil; pass the store whose deliveries the jobs carry (the sweeper reads it)")
	}
	conf := cfg.withDefaults()
	if err := conf.validate(); err != nil {
		return nil, err
	}
	workers, jobTimeout, err := qcfg.Resolve()
	if err != nil {
		return nil, fmt.Errorf("redisqueue: %w", err)
	}
	opt, err := redisClientOpt(redisURL)
	if err != nil {
		return nil, err
	}
	rdb, ok := opt.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return nil, fmt.Errorf("redisqueue: asynq made a Redis client of type %T", opt.MakeRedisClient())
	}
	return &Queue{
		rdb:       rdb,
		client:    asynq.NewClientFromRedisClient(rdb),
		inspector: asynq.NewInspectorFromRedisClient(rdb),
		store:     store,
		cfg:       conf,
		workers:   workers,
		tm:        newTiming(conf, jobTimeout),
		logger:    conf.Logger,
		redisURL:  redactURL(redisURL),
	}, nil
}

// Namespace returns the queue's namespace (Config.Namespace).
func (q *Queue) Namespace() string { return q.cfg.Namespace }

// EnqueueTx enqueues jobs once tx commits. tx must be a hookd.AfterCommitter (the store's own
// transactions, from InTx); any other transaction, or nil, gives an error wrapping
// hookd.ErrUnsupportedTx. A transaction the app commits itself (from the store's WrapTx, for
// SendTx) runs nothing after its commit: its jobs are left to the sweeper, which enqueues them
// once they are SweepAfter past due. A failed enqueue after the commit is logged at Warn and left
// to the sweeper too.
func (q *Queue) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if tx == nil {
		return fmt.Errorf("redisqueue: enqueue: nil transaction: %w", hookd.ErrUnsupportedTx)
	}
	ac, ok := tx.(hookd.AfterCommitter)
	if !ok {
		return fmt.Errorf("redisqueue: enqueue: transaction is %T, which cannot run functions after it commits (hookd.AfterCommitter); use the store's InTx: %w", tx, hookd.ErrUnsupportedTx)
	}
	for i, j := range jobs {
		if j.DeliveryID == "" {
			return fmt.Errorf("redisqueue: enqueue: job %d: %w", i, &hookd.ValidationError{Field: "DeliveryID", Reason: "is empty"})
		}
	}
	jobs = slices.Clone(jobs)
	if !ac.AfterCommit(func() { q.enqueueCommitted(ctx, jobs) }) {
		q.logger.LogAttrs(ctx, slog.LevelDebug, "hookd jobs in a transaction the app commits are left to the sweeper",
			slog.Int("jobs", len(jobs)), slog.Duration("sweep_after", q.cfg.SweepAfter))
	}
	return nil
}

// enqueueCommitted enqueues the jobs of a committed transaction.
func (q *Queue) enqueueCommitted(ctx context.Context, jobs []hookd.Job) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterCommitTimeout)
	defer cancel()
	if _, err := q.enqueueAll(ctx, jobs); err != nil {
		q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd jobs not enqueued after commit; the sweeper will enqueue them",
			slog.Int("jobs", len(jobs)), slog.Duration("sweep_after", q.cfg.SweepAfter), slog.String("error", err.Error()))
	}
}

// enqueueAll enqueues jobs, several at a time, and returns how many became new tasks (the others
// were held already). It stops at the first error.
func (q *Queue) enqueueAll(ctx context.Context, jobs []hookd.Job) (int, error) {
	now := time.Now()
	if len(jobs) == 1 {
		added, err := q.enqueue(ctx, jobs[0], now)
		if added {
			return 1, err
		}
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, added atomic.Int64
		wg          sync.WaitGroup
		once        sync.Once
		firstErr    error
	)
	for range min(len(jobs), enqueueConcurrency) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				ok, err := q.enqueue(ctx, jobs[i], now)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				if ok {
					added.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(added.Load()), firstErr
}

// enqueue enqueues one job; added is false when asynq holds a task with its id already.
func (q *Queue) enqueue(ctx context.Context, j hookd.Job, now time.Time) (added bool, err error) {
	b, err := encodeJob(j)
	if err != nil {
		return false, fmt.Errorf("enqueue job %s: %w", TaskID(j), err)
	}
	_, err = q.client.EnqueueContext(ctx, asynq.NewTask(TaskType, b), q.tm.taskOptions(q.cfg.Namespace, j, now)...)
	switch {
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("enqueue job %s: %w", TaskID(j), err)
	}
	return true, nil
}

// Start checks that Redis answers, starts an asynq server per lane that works jobs with h, and
// starts the sweeper, which runs at once and then every SweepInterval (a sweep that enqueued
// jobs logs how many at Warn: a delivery without a job is a fault). Cancelling ctx stops the
// queue as Stop does, with the jobs in flight given up to the job timeout to finish. A Queue
// started again after Stop builds new servers.
func (q *Queue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return ErrClosed
	case q.run != nil:
		return ErrAlreadyStarted
	}
	if err := q.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redisqueue: start: reach Redis at %s: %w", q.redisURL, err)
	}
	r := newRun(q, ctx, h)
	logger, level := newAsynqLogger(q.logger)
	for _, l := range lanes {
		srv := asynq.NewServerFromRedisClient(q.rdb, asynq.Config{
			Concurrency:              q.workers[l],
			BaseContext:              func() context.Context { return r.ctx },
			TaskCheckInterval:        q.cfg.pollInterval(l),
			DelayedTaskCheckInterval: q.cfg.ForwardInterval,
			RetryDelayFunc:           q.retryDelay,
			IsFailure:                isFailure,
			Queues:                   map[string]int{QueueName(q.cfg.Namespace, l): 1},
			Logger:                   logger,
			LogLevel:                 level,
			// Stop waits for the jobs in flight as long as its context lasts, and asynq ends a
			// task at its timeout anyway: asynq's own limit never comes first.
			ShutdownTimeout: q.tm.taskTimeout + drain.HardStop,
		})
		if err := srv.Start(asynq.HandlerFunc(r.process)); err != nil {
			r.shutdownServers()
			r.cancel()
			return fmt.Errorf("redisqueue: start the %s lane: %w", l, err)
		}
		r.servers = append(r.servers, srv)
	}
	r.startSweeper()
	q.run = r
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.Background(), q.tm.jobTimeout)
				defer cancel()
				_ = q.stopRun(sctx, r)
			case <-r.stopping:
			}
		}()
	}
	return nil
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return and returns an
// error wrapping ctx's. A cancelled job goes back to its queue without a failure counted, and
// runs after a later Start (here or in another process). Stop of a queue that is not running
// returns nil.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	r := q.run
	q.mu.Unlock()
	return q.stopRun(ctx, r)
}

// stopRun stops r if it is the queue's current run.
func (q *Queue) stopRun(ctx context.Context, r *run) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r == nil || q.run != r {
		return nil
	}
	q.run = nil
	return r.stop(ctx)
}

// Close stops the queue if it runs (as Stop with a context of the job timeout) and closes its
// Redis connections. EnqueueTx fails after Close.
func (q *Queue) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), q.tm.jobTimeout)
	defer cancel()
	stopErr := q.Stop(ctx)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return stopErr
	}
	q.closed = true
	if err := q.rdb.Close(); err != nil {
		return errors.Join(stopErr, fmt.Errorf("redisqueue: close: %w", err))
	}
	return stopErr
}
