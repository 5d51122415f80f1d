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

// jobsDriver is the queue engine's driver over the store's hookd_jobs (jobqueue.Driver).
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
	gen     uint64             // the run (Open) the state below belongs to
	running map[int64]struct{} // fetched, outcome not yet committed
	settled map[int64]uint64   // outcome committed at sequence n
	seq     uint64
}

// jobRef is a fetched job: its row, and the run that fetched it.
type jobRef struct {
	id  int64
	gen uint64
}

// Open takes the store's queue lock (one queue of a store runs at a time) and forgets a previous
// run's state: every job in the file is due again.
func (d *jobsDriver) Open() error {
	if !d.s.queueRunning.CompareAndSwap(false, true) {
		return fmt.Errorf("sqlite queue: start: %w", ErrQueueRunning)
	}
	for i := range d.lanes {
		set := &d.lanes[i]
		set.mu.Lock()
		set.gen++
		set.running = make(map[int64]struct{})
		set.settled = make(map[int64]uint64)
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

// Fetch reads up to limit jobs of lane due by horizon, skipping those running or settled since
// the latest fetch began, and adds them to the lane's running set.
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

	rows, err := d.s.rdb.QueryContext(ctx, fetchJobsSQL, string(lane), horizon.UnixMicro(), limit+skip)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var found []jobqueue.Job[jobRef]
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		j.Ref.gen = gen
		found = append(found, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
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
		if _, ok := set.running[j.Ref.id]; ok {
			continue
		}
		if _, ok := set.settled[j.Ref.id]; ok {
			continue
		}
		set.running[j.Ref.id] = struct{}{}
		jobs = append(jobs, j)
	}
	return jobs, nil
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
// again at their run_at; a released job's row is unchanged, and due. Once it has committed, the
// jobs leave their lanes' running sets.
func (d *jobsDriver) Settle(ctx context.Context, batch []jobqueue.Outcome[jobRef]) error {
	ctx = hookd.BackgroundWrite(ctx)
	var ids []any
	again := 0
	for _, o := range batch {
		switch o.Result {
		case jobqueue.Done:
			ids = append(ids, o.Ref.id)
		case jobqueue.Again:
			again++
		}
	}
	if len(ids) > 0 || again > 0 {
		err := d.s.InTx(ctx, func(tx hookd.Tx) error {
			t := tx.(*txn)
			for _, o := range batch {
				if o.Result != jobqueue.Again {
					continue
				}
				if _, err := t.sqlTx.ExecContext(ctx, `UPDATE hookd_jobs SET run_at = ?, failures = ?, last_error = ? WHERE id = ?`,
					o.RunAt.UnixMicro(), o.Failures, o.LastError, o.Ref.id); err != nil {
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
		delete(set.running, o.Ref.id)
		if o.Result != jobqueue.Released {
			set.seq++
			set.settled[o.Ref.id] = set.seq
		}
	}
	set.mu.Unlock()
	if o.Result == jobqueue.Again {
		d.wake(o.Lane)
	}
}
