package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobrun"
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
	fin     *jobrun.Finisher[outcome]
	run     jobrun.Run
}

var _ hookd.Queue = (*Queue)(nil)

// Queue timing. See the type's documentation.
const (
	firstPollInterval = 20 * time.Millisecond
	pollInterval      = 100 * time.Millisecond
	// fetchCooldown is the least time between two fetches of one lane.
	fetchCooldown = 2 * time.Millisecond
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
	q.fin = jobrun.NewFinisher(q.flush)
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
		if i := jobrun.LaneIndex(l); !woken[i] {
			woken[i] = true
			if ln := q.lanes[l]; ln != nil {
				t.AfterCommit(ln.wake.Raise)
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

// Start begins working jobs with h and returns. Every job in the file is due to it, also those a
// crashed process was working. Cancelling ctx stops the queue as Stop does, with running jobs
// given up to the job timeout to finish.
func (q *Queue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	err := q.run.Start(ctx, "sqlite queue", q.timeout, func(jobCtx context.Context, stop <-chan struct{}) (func() error, error) {
		if !q.s.queueRunning.CompareAndSwap(false, true) {
			return nil, fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
		}
		q.fin.Start()
		for _, ln := range q.lanes {
			ln.reset()
			q.run.Loop(func() { ln.fetchLoop(jobCtx, stop, h) })
		}
		return func() error {
			defer q.s.queueRunning.Store(false)
			return q.fin.Stop()
		}, nil
	})
	if errors.Is(err, jobrun.ErrRunning) {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	return err
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return (a job that
// returns after its context was cancelled stays due, without a failure counted) and returns an
// error wrapping ctx's. The outcomes of the jobs that finished are written before Stop returns.
func (q *Queue) Stop(ctx context.Context) error { return q.run.Stop(ctx, "sqlite queue") }
