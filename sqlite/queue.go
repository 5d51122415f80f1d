package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

// Queue is the store's own hookd.Queue: jobs are rows of hookd_jobs in the store's file, written
// in the transaction that writes the deliveries they carry.
//
// One process has the file open (the store's process lock), so the queue keeps which jobs are
// running in memory, not in the file: fetching a job is a read on one of the store's read
// connections and writes nothing, a worked job is deleted, and a snoozed or failed one gets a
// later run_at, these outcomes batched into one transaction on the write connection. A crash
// leaves every unfinished job due again for the next process; a job that was running is made again
// (the worker drops it when its attempt is already recorded).
//
// # Timing
//
// A job enqueued through the store's own transactions (InTx) wakes its lane when the transaction
// commits; one enqueued in a wrapped transaction of the app's (WrapTx) is found by the lane's poll
// (every 20 ms for first attempts, 100 ms for retries and manual attempts). A lane fetches jobs
// due within two poll intervals and holds each in its worker slot until its due time, so a job
// starts within a few milliseconds of its NotBefore.
//
// # Results
//
// A handler that returns nil finishes the job; a *hookd.SnoozeError makes it due again after the
// delay, the same job; any other error makes it due again after 1 s, 2 s, 4 s ... at most 1 min,
// for about a week (10,000 failures), after which the job is dropped with an error in the log.
type Queue struct {
	s       *Store
	logger  *slog.Logger
	timeout time.Duration
	lanes   map[hookd.Lane]*lane
	fin     *finisher

	mu      sync.Mutex // serializes Start and Stop
	running bool
	stop    chan struct{}      // closed by Stop: lanes stop fetching
	cancel  context.CancelFunc // cancels the jobs' context: a hard stop
	fetchWG sync.WaitGroup     // the lanes' fetch loops
	jobsWG  sync.WaitGroup     // jobs in flight
}

var _ hookd.Queue = (*Queue)(nil)

// Queue timing. See the type's documentation.
const (
	firstPollInterval = 20 * time.Millisecond
	pollInterval      = 100 * time.Millisecond
	// fetchCooldown is the least time between two fetches of one lane.
	fetchCooldown = 2 * time.Millisecond
	// hardStopWait is how long Stop waits, once its context has ended and running jobs have been
	// cancelled, for them to return.
	hardStopWait = 5 * time.Second
	// maxFailures is how often a job's handler may fail (a database error, never a snooze)
	// before the job is dropped: with retries backing off to one a minute, about a week.
	maxFailures = 10_000
)

// ErrQueueRunning is returned by Start when a queue of the store is already running: one
// process works a file's jobs through one queue.
var ErrQueueRunning = errors.New("sqlite: a queue of this store is already running")

// NewQueue returns the store's queue, sized by cfg (nil: defaults). EnqueueTx works at once;
// jobs are worked after Start. Only one queue of a store may run at a time.
func (s *Store) NewQueue(cfg *hookd.QueueConfig) (hookd.Queue, error) {
	workers, timeout, err := cfg.Resolve()
	if err != nil {
		return nil, fmt.Errorf("sqlite queue: %w", err)
	}
	q := &Queue{s: s, logger: s.logger, timeout: timeout, lanes: make(map[hookd.Lane]*lane, len(workers))}
	for l, n := range workers {
		poll := pollInterval
		if l == hookd.LaneFirst {
			poll = firstPollInterval
		}
		q.lanes[l] = newLane(q, l, n, poll)
	}
	q.fin = newFinisher(q)
	return q, nil
}

func invalid(field, reason string) error {
	return fmt.Errorf("sqlite queue: %w", &hookd.ValidationError{Field: field, Reason: reason})
}

// EnqueueTx inserts jobs in tx, a transaction of this store (from InTx, or WrapTx of a
// transaction on DB()); any other transaction gives an error wrapping hookd.ErrUnsupportedTx.
func (q *Queue) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	t, ok := tx.(*txn)
	if !ok || t == nil || t.sqlTx == nil {
		return fmt.Errorf("sqlite queue: enqueue: transaction is %T, want one of this store's (InTx or WrapTx): %w", tx, hookd.ErrUnsupportedTx)
	}
	now := time.Now().UnixMicro()
	args := make([]any, 0, len(jobs)*jobCols)
	var woken [3]bool
	for i, j := range jobs {
		if j.DeliveryID == "" {
			return fmt.Errorf("sqlite queue: enqueue: job %d: %w", i, &hookd.ValidationError{Field: "DeliveryID", Reason: "is empty"})
		}
		l := j.Lane()
		runAt, notBefore := now, any(nil)
		if !j.NotBefore.IsZero() {
			nb := j.NotBefore.UnixMicro()
			runAt, notBefore = max(now, nb), nb
		}
		args = append(args, string(l), runAt, j.DeliveryID, j.Attempt, string(j.Trigger), notBefore)
		if i := laneIndex(l); !woken[i] {
			woken[i] = true
			if ln := q.lanes[l]; ln != nil {
				t.AfterCommit(ln.wake)
			}
		}
	}
	if _, err := t.execBatch(ctx, q.s.stmts.insertJobs, jobCols, args); err != nil {
		return fmt.Errorf("sqlite queue: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// jobCols is the number of parameters of one row of insertJobsSQL.
const jobCols = 6

func insertJobsSQL(rows int) string {
	return `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before) VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", rows), ", ")
}

func deleteJobsSQL(rows int) string {
	return `DELETE FROM hookd_jobs WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", rows), ", ") + `)`
}

func laneIndex(l hookd.Lane) int {
	switch l {
	case hookd.LaneRetry:
		return 1
	case hookd.LaneManual:
		return 2
	default:
		return 0
	}
}

// Start begins working jobs with h and returns. Every job in the file is due to it, also those a
// crashed process was working. Cancelling ctx stops the queue as Stop does, with running jobs
// given up to the job timeout to finish.
func (q *Queue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	if !q.s.queueRunning.CompareAndSwap(false, true) {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.stop, q.cancel, q.running = make(chan struct{}), cancel, true
	q.fin.start()
	for _, ln := range q.lanes {
		ln.reset()
		q.fetchWG.Add(1)
		go func() {
			defer q.fetchWG.Done()
			ln.fetchLoop(jobCtx, q.stop, h)
		}()
	}
	if ctx.Done() != nil {
		stop := q.stop
		go func() {
			select {
			case <-ctx.Done():
				sctx, scancel := context.WithTimeout(context.Background(), q.timeout)
				defer scancel()
				_ = q.stopIf(sctx, stop)
			case <-stop:
			}
		}()
	}
	return nil
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return (a job that
// returns after its context was cancelled stays due, without a failure counted) and returns an
// error wrapping ctx's. The outcomes of the jobs that finished are written before Stop returns.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	stop := q.stop
	q.mu.Unlock()
	return q.stopIf(ctx, stop)
}

// stopIf stops the queue if its current run is the one whose stop channel is stop.
func (q *Queue) stopIf(ctx context.Context, stop chan struct{}) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.running || q.stop != stop {
		return nil
	}
	close(q.stop)
	q.fetchWG.Wait()
	drained := make(chan struct{})
	go func() {
		q.jobsWG.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		q.cancel()
		select {
		case <-drained:
			err = fmt.Errorf("sqlite queue: stop: jobs in flight cancelled: %w", ctx.Err())
		case <-time.After(hardStopWait):
			err = fmt.Errorf("sqlite queue: stop: jobs cancelled but still running after %s: %w", hardStopWait, ctx.Err())
		}
	}
	q.cancel()
	if ferr := q.fin.stop(); ferr != nil {
		err = errors.Join(err, ferr)
	}
	q.running = false
	q.s.queueRunning.Store(false)
	return err
}
