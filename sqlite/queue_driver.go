package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

// jobsDriver is the queue engine's driver over the store's hookd_jobs and the deliveries that are
// their own first job (jobqueue.Driver).
//
// A fetch reads due jobs on a read connection, whose snapshot may be older than an outcome just
// settled. So a fetched job's id stays in its lane's running set until its outcome is committed,
// and then sits in settled, with the sequence number of that commit, until a fetch begins after
// it: a fetch skips both, and sees every outcome committed before it began.
type jobsDriver struct {
	s     *Store
	wake  func(hookd.Lane) // the engine's Wake
	lanes [3]runningSet    // by jobqueue.LaneIndex
}

var _ jobqueue.Driver[jobRef] = (*jobsDriver)(nil)

// runningSet is one lane's jobs fetched and not yet settled, or settled after the latest fetch
// began.
type runningSet struct {
	mu      sync.Mutex
	gen     uint64              // the run (Open) the state below belongs to
	running map[jobKey]struct{} // fetched, outcome not yet committed
	settled map[jobKey]uint64   // outcome committed at sequence n
	seq     uint64
}

// jobKey names a job: its row of hookd_jobs, or the delivery whose own first job it is.
type jobKey struct {
	id  int64  // the row's id; 0 for a delivery's own job
	own string // the delivery's id, for its own job
}

// jobRef is a fetched job: its key, and the run that fetched it.
type jobRef struct {
	jobKey
	gen uint64
}

// Open takes the store's queue lock (one queue of a store runs at a time), forgets a previous
// run's state (every job in the file is due again) and repairs the jobs (queue_repair.go).
func (d *jobsDriver) Open(ctx context.Context) error {
	if !d.s.queueRunning.CompareAndSwap(false, true) {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	if err := d.s.repairJobs(ctx); err != nil {
		d.s.queueRunning.Store(false)
		return fmt.Errorf("sqlite queue: start: %w", err)
	}
	for i := range d.lanes {
		set := &d.lanes[i]
		set.mu.Lock()
		set.gen++
		set.running = make(map[jobKey]struct{})
		set.settled = make(map[jobKey]uint64)
		set.mu.Unlock()
	}
	return nil
}

// Close gives back the store's queue lock.
func (d *jobsDriver) Close() error {
	d.s.queueRunning.Store(false)
	return nil
}

const fetchJobsSQL = `SELECT id, run_at, delivery_id, attempt, trigger_kind, not_before, failures
	FROM hookd_jobs WHERE lane = ? AND run_at <= ? ORDER BY run_at, id LIMIT ?`

// fetchOwnJobsSQL reads the deliveries that are their own first job, oldest first, on the partial
// index hookd_deliveries_first_job.
const fetchOwnJobsSQL = `SELECT id FROM hookd_deliveries
	WHERE first_job AND status = 'pending' ORDER BY id LIMIT ?`

// Fetch reads up to limit jobs of lane due by horizon, skipping those running or settled since
// the latest fetch began, and adds them to the lane's running set. The first lane fills the slots
// its rows of hookd_jobs leave with the deliveries' own first jobs, which are due at once.
func (d *jobsDriver) Fetch(ctx context.Context, lane hookd.Lane, limit int, horizon time.Time) ([]jobqueue.Job[jobRef], error) {
	set := &d.lanes[jobqueue.LaneIndex(lane)]
	set.mu.Lock()
	start := set.seq
	for id, n := range set.settled {
		if n <= start {
			delete(set.settled, id)
		}
	}
	skip := len(set.running) + len(set.settled)
	gen := set.gen
	set.mu.Unlock()

	found, err := d.read(ctx, fetchJobsSQL, scanJob, string(lane), horizon.UnixMicro(), limit+skip)
	if err != nil {
		return nil, err
	}
	if lane == hookd.LaneFirst && len(found) < limit+skip {
		own, err := d.read(ctx, fetchOwnJobsSQL, scanOwnJob, limit+skip)
		if err != nil {
			return nil, err
		}
		found = append(found, own...)
	}

	set.mu.Lock()
	defer set.mu.Unlock()
	if set.gen != gen {
		return nil, nil
	}
	jobs := found[:0]
	for _, j := range found {
		if len(jobs) >= limit {
			break
		}
		if _, ok := set.running[j.Ref.jobKey]; ok {
			continue
		}
		if _, ok := set.settled[j.Ref.jobKey]; ok {
			continue
		}
		set.running[j.Ref.jobKey] = struct{}{}
		j.Ref.gen = gen
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// read runs a fetch's query on a read connection and scans its jobs.
func (d *jobsDriver) read(ctx context.Context, query string, scan func(*sql.Rows) (jobqueue.Job[jobRef], error), args ...any) ([]jobqueue.Job[jobRef], error) {
	rows, err := d.s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []jobqueue.Job[jobRef]
	for rows.Next() {
		j, err := scan(rows)
		if err != nil {
			return nil, err
		}
		found = append(found, j)
	}
	return found, rows.Err()
}

// scanOwnJob reads a delivery's own first job: its first scheduled attempt, due at once (not
// at the delivery's created_at, which is the client's clock, hookd.Config.Now).
func scanOwnJob(rows *sql.Rows) (jobqueue.Job[jobRef], error) {
	var j jobqueue.Job[jobRef]
	if err := rows.Scan(&j.DeliveryID); err != nil {
		return j, fmt.Errorf("scan own job: %w", err)
	}
	j.Ref.own = j.DeliveryID
	j.Attempt, j.Trigger, j.RunAt = 1, hookd.TriggerScheduled, time.Now()
	return j, nil
}

func scanJob(rows *sql.Rows) (jobqueue.Job[jobRef], error) {
	var (
		j         jobqueue.Job[jobRef]
		runAt     int64
		notBefore sql.NullInt64
		trigger   string
	)
	if err := rows.Scan(&j.Ref.id, &runAt, &j.DeliveryID, &j.Attempt, &trigger, &notBefore, &j.Failures); err != nil {
		return j, fmt.Errorf("scan job: %w", err)
	}
	j.RunAt = time.UnixMicro(runAt)
	j.Trigger = hookd.AttemptTrigger(trigger)
	if notBefore.Valid {
		j.NotBefore = time.UnixMicro(notBefore.Int64).UTC()
	}
	return j, nil
}

// Settle writes a batch of outcomes in one transaction: finished jobs deleted, the others due
// again at their run_at; a released job's row is unchanged, and due. A delivery's own job that
// finished has its first_job cleared, unless what ended it (its attempt's record, mostly) did
// already; one due again moves to a row of hookd_jobs. Once it has committed, the jobs leave
// their lanes' running sets.
func (d *jobsDriver) Settle(ctx context.Context, batch []jobqueue.Outcome[jobRef]) error {
	ctx = hookd.BackgroundWrite(ctx)
	var (
		ids   []any
		owned []string
		again int
	)
	for _, o := range batch {
		switch {
		case o.Result == jobqueue.Released:
		case o.Ref.own != "":
			owned = append(owned, o.Ref.own)
		case o.Result == jobqueue.Done:
			ids = append(ids, o.Ref.id)
		default:
			again++
		}
	}
	if len(ids) > 0 || len(owned) > 0 || again > 0 {
		err := d.s.InTx(ctx, func(tx hookd.Tx) error {
			t := tx.(*txn)
			for _, o := range batch {
				if o.Result != jobqueue.Again {
					continue
				}
				query, args := `UPDATE hookd_jobs SET run_at = ?, failures = ?, last_error = ? WHERE id = ?`,
					[]any{o.RunAt.UnixMicro(), o.Failures, o.LastError, o.Ref.id}
				if o.Ref.own != "" {
					query, args = `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, failures, last_error)
						SELECT ?, ?, id, 1, ?, ?, ? FROM hookd_deliveries WHERE id = ? AND first_job`,
						[]any{string(o.Lane), o.RunAt.UnixMicro(), string(hookd.TriggerScheduled), o.Failures, o.LastError, o.Ref.own}
				}
				if _, err := t.sqlTx.ExecContext(ctx, query, args...); err != nil {
					return err
				}
			}
			if len(owned) > 0 {
				if _, err := t.sqlTx.ExecContext(ctx, `UPDATE hookd_deliveries SET first_job = 0
					WHERE id IN (SELECT value FROM json_each(?)) AND first_job`, jsonList(owned)); err != nil {
					return err
				}
			}
			_, err := t.execBatch(ctx, d.s.stmts.deleteJobs, 1, ids)
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, o := range batch {
		d.settled(o)
	}
	return nil
}

// settled records that o is committed: its job leaves the running set, and one with a new
// run_at wakes its lane, as the job may be due before the lane's next poll.
func (d *jobsDriver) settled(o jobqueue.Outcome[jobRef]) {
	set := &d.lanes[jobqueue.LaneIndex(o.Lane)]
	set.mu.Lock()
	if set.gen == o.Ref.gen {
		delete(set.running, o.Ref.jobKey)
		if o.Result != jobqueue.Released {
			set.seq++
			set.settled[o.Ref.jobKey] = set.seq
		}
	}
	set.mu.Unlock()
	if o.Result == jobqueue.Again {
		d.wake(o.Lane)
	}
}
