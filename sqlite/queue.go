package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

// Queue is the store's own hookd.Queue: jobs are rows of hookd_jobs in the store's file, written
// in the transaction that writes the deliveries they carry. Its lanes, polls, snoozes, failures
// and stop are the SQL stores' queue engine's, described in the package documentation of
// internal/jobqueue; what is SQLite's own follows.
//
// One process has the file open (the store's process lock), so the queue keeps which jobs are
// running in memory, not in the file: fetching a job is a read on one of the store's read
// connections and writes nothing, a worked job is deleted, and a snoozed or failed one gets a
// later run_at, these outcomes batched into one transaction on the write connection. A crash
// leaves every unfinished job due again for the next process; a job that was running is made again
// (the worker drops it when its attempt is already recorded). A job enqueued through the store's
// own transactions (InTx) wakes its lane when the transaction commits; one enqueued in a wrapped
// transaction of the app's (WrapTx) is found by the lane's poll.
//
// # A delivery is its own first job
//
// Most deliveries need one attempt, so the first attempt has no row of its own: the delivery row
// is the job while its first_job column is 1, which InsertDeliveries writes (migration 15).
// EnqueueTx inserts no row for a first scheduled attempt due at once whose delivery is pending
// and its own first job, as the delivery that Send inserts in the same transaction is: a send
// writes no hookd_jobs row and its index entry, and the settle deletes none. Every other job is
// a row of hookd_jobs: a retry, a manual attempt, a first attempt with a NotBefore (which clears
// first_job, so that the attempt has one job), an unparked or recovered delivery's attempt. The
// first lane reads its due rows of hookd_jobs, then the deliveries that are their own first job
// (the partial index hookd_deliveries_first_job, in id order) into the slots left; running and
// settled own jobs are kept in memory by delivery id, as rows are by row id. The delivery's own
// job ends with the writes that end its first attempt: the attempt's record, a status change
// (SetDeliveryStatus), a park; a settled one whose delivery still has it (a job dropped after too
// many failures) has first_job cleared by the settle. A snoozed or failed own job moves to
// hookd_jobs, as the same job with its failures, so that the first lane never reads over
// deliveries that wait; one given back by Stop stays.
type Queue struct {
	s      *Store
	engine *jobqueue.Engine[jobRef]
}

var _ hookd.Queue = (*Queue)(nil)

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
	d := &jobsDriver{s: s}
	e := jobqueue.New(d, jobqueue.Config{Name: "sqlite queue", Logger: s.logger, Workers: workers, JobTimeout: timeout})
	d.wake = e.Wake
	return &Queue{s: s, engine: e}, nil
}

func invalid(field, reason string) error {
	return fmt.Errorf("sqlite queue: %w", &hookd.ValidationError{Field: field, Reason: reason})
}

// EnqueueTx inserts jobs in tx, a transaction of this store (from InTx, or WrapTx of a
// transaction on DB()); any other transaction gives an error wrapping hookd.ErrUnsupportedTx. A
// delivery's first scheduled attempt due at once inserts no row while the delivery is its own
// first job (see the type's documentation), which a delivery inserted in tx is.
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
	var (
		disown []string
		woken  [3]bool
	)
	for i, j := range jobs {
		if j.DeliveryID == "" {
			return fmt.Errorf("sqlite queue: enqueue: job %d: %w", i, &hookd.ValidationError{Field: "DeliveryID", Reason: "is empty"})
		}
		l := j.Lane()
		first := j.Attempt == 1 && j.Trigger == hookd.TriggerScheduled
		runAt, notBefore := now, any(nil)
		if !j.NotBefore.IsZero() {
			nb := j.NotBefore.UnixMicro()
			runAt, notBefore = max(now, nb), nb
			if first {
				disown = append(disown, j.DeliveryID)
			}
		}
		own := first && j.NotBefore.IsZero()
		args = append(args, string(l), runAt, j.DeliveryID, j.Attempt, string(j.Trigger), notBefore, own)
		if i := jobqueue.LaneIndex(l); !woken[i] {
			woken[i] = true
			t.AfterCommit(func() { q.engine.Wake(l) })
		}
	}
	if len(disown) > 0 {
		if _, err := t.sqlTx.ExecContext(ctx, `UPDATE hookd_deliveries SET first_job = 0
			WHERE id IN (SELECT value FROM json_each(?)) AND first_job`, jsonList(disown)); err != nil {
			return fmt.Errorf("sqlite queue: enqueue %d jobs: %w", len(jobs), err)
		}
	}
	if _, err := t.execBatch(ctx, q.s.stmts.insertJobs, jobCols, args); err != nil {
		return fmt.Errorf("sqlite queue: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// jobCols is the number of parameters of one row of insertJobsSQL.
const jobCols = 7

// insertJobsSQL inserts the jobs, but not a delivery's first scheduled attempt due at once (the
// seventh column, own) while the delivery row is its own first job: that row is the job.
func insertJobsSQL(rows int) string {
	return `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
		SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6
		FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", rows), ", ") + `) AS v
		WHERE NOT (v.column7 AND EXISTS (SELECT 1 FROM hookd_deliveries d
			WHERE d.id = v.column3 AND d.first_job AND d.status = 'pending'))`
}

func deleteJobsSQL(rows int) string {
	return `DELETE FROM hookd_jobs WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", rows), ", ") + `)`
}

// Start begins working jobs with h and returns. Every job in the file is due to it, also those a
// crashed process was working. Before the first fetch it repairs the file's jobs (queue_repair.go):
// hookd's jobs left in River's table move to hookd_jobs, and every pending delivery left without
// a job gets one, which it logs at Warn; an error there is Start's. Cancelling ctx stops the queue
// as Stop does, with running jobs given up to the job timeout to finish.
func (q *Queue) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil {
		return invalid("handler", "is nil")
	}
	err := q.engine.Start(ctx, h)
	if errors.Is(err, jobqueue.ErrRunning) {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	return err
}

// Stop stops fetching jobs and waits for the jobs in flight until ctx ends. Jobs still running
// then have their contexts cancelled; Stop waits up to 5 s more for them to return (a job that
// returns after its context was cancelled stays due, without a failure counted) and returns an
// error wrapping ctx's. The outcomes of the jobs that finished are written before Stop returns.
func (q *Queue) Stop(ctx context.Context) error { return q.engine.Stop(ctx) }
