package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobrun"
)

// lane fetches and runs the jobs of one hookd lane with up to workers at once.
//
// A fetch reads due jobs on a read connection, whose snapshot may be older than an outcome the
// finisher has just committed. So an id stays in running until its outcome is committed, and
// then sits in settled, with the sequence number of that commit, until a fetch begins after it:
// a fetch skips both, and sees every outcome committed before it began.
type lane struct {
	q       *Queue
	name    hookd.Lane
	workers int
	poll    time.Duration
	wake    jobrun.Signal // fetch now rather than at the next poll

	mu      sync.Mutex
	gen     uint64             // the run (Start) the state below belongs to
	busy    int                // worker slots taken
	running map[int64]struct{} // fetched, outcome not yet committed
	settled map[int64]uint64   // outcome committed at sequence n
	seq     uint64
}

func newLane(q *Queue, name hookd.Lane, workers int, poll time.Duration) *lane {
	return &lane{q: q, name: name, workers: workers, poll: poll, wake: jobrun.NewSignal()}
}

// reset forgets a previous run's state (Start): every job in the file is due again.
func (l *lane) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	l.busy = 0
	l.running = make(map[int64]struct{})
	l.settled = make(map[int64]uint64)
}

// queuedJob is a fetched job.
type queuedJob struct {
	id       int64
	job      hookd.Job
	runAt    time.Time
	failures int
	gen      uint64
}

// fetchLoop fetches due jobs into free worker slots until stop is closed.
func (l *lane) fetchLoop(ctx context.Context, stop <-chan struct{}, h hookd.JobHandler) {
	jobrun.FetchLoop(ctx, stop, l.wake, l.poll, fetchCooldown, l.fetch,
		func(j queuedJob) { l.q.run.Job(func() { l.run(ctx, j, h) }) },
		func(err error) {
			l.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: fetch failed", slog.String("lane", string(l.name)), slog.String("error", err.Error()))
		})
}

// fetch reads the jobs due within two poll intervals, as many as there are free slots, and
// takes a slot for each. full says that the fetch filled every free slot, so more may be due.
func (l *lane) fetch(ctx context.Context) (jobs []queuedJob, full bool, err error) {
	l.mu.Lock()
	free := l.workers - l.busy
	start := l.seq
	for id, n := range l.settled {
		if n <= start {
			delete(l.settled, id)
		}
	}
	skip := len(l.running) + len(l.settled)
	gen := l.gen
	l.mu.Unlock()
	if free <= 0 {
		return nil, false, nil
	}

	horizon := time.Now().Add(2 * l.poll)
	rows, err := l.q.s.rdb.QueryContext(ctx, fetchJobsSQL, string(l.name), horizon.UnixMicro(), free+skip)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var found []queuedJob
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, false, err
		}
		j.gen = gen
		found = append(found, j)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen {
		return nil, false, nil
	}
	for _, j := range found {
		if l.busy >= l.workers {
			break
		}
		if _, ok := l.running[j.id]; ok {
			continue
		}
		if _, ok := l.settled[j.id]; ok {
			continue
		}
		l.running[j.id] = struct{}{}
		l.busy++
		jobs = append(jobs, j)
	}
	return jobs, len(jobs) == free, nil
}

const fetchJobsSQL = `SELECT id, run_at, delivery_id, attempt, trigger_kind, not_before, failures
	FROM hookd_jobs WHERE lane = ? AND run_at <= ? ORDER BY run_at, id LIMIT ?`

func scanJob(rows *sql.Rows) (queuedJob, error) {
	var (
		j         queuedJob
		runAt     int64
		notBefore sql.NullInt64
		trigger   string
	)
	if err := rows.Scan(&j.id, &runAt, &j.job.DeliveryID, &j.job.Attempt, &trigger, &notBefore, &j.failures); err != nil {
		return j, fmt.Errorf("scan job: %w", err)
	}
	j.runAt = time.UnixMicro(runAt)
	j.job.Trigger = hookd.AttemptTrigger(trigger)
	if notBefore.Valid {
		j.job.NotBefore = time.UnixMicro(notBefore.Int64).UTC()
	}
	return j, nil
}

// run holds j until it is due, works it with h, and hands the outcome to the finisher.
func (l *lane) run(ctx context.Context, j queuedJob, h hookd.JobHandler) {
	out, ok := l.work(ctx, j, h)
	l.mu.Lock()
	if l.gen == j.gen {
		l.busy--
		if !ok {
			delete(l.running, j.id) // no outcome: the row is unchanged and due
		}
	}
	l.mu.Unlock()
	l.wake.Raise()
	if ok {
		l.q.fin.Add(out)
	}
}

// work returns the outcome to write, or false when there is none (stopped before or during the
// job: it stays due as it is).
func (l *lane) work(ctx context.Context, j queuedJob, h hookd.JobHandler) (outcome, bool) {
	if wait := time.Until(j.runAt); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return outcome{}, false
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		return outcome{}, false
	}
	hctx, cancel := context.WithTimeout(ctx, l.q.timeout)
	err := h(hctx, j.job)
	cancel()
	out := outcome{lane: l, id: j.id, gen: j.gen}
	if err == nil {
		return out, true
	}
	if d, ok := hookd.AsSnooze(err); ok {
		out.reschedule, out.runAt, out.failures = true, time.Now().Add(max(d, time.Millisecond)), j.failures
		return out, true
	}
	if ctx.Err() != nil {
		return outcome{}, false // cancelled by Stop: due again at the next Start
	}
	n := j.failures + 1
	if n >= maxFailures {
		l.q.logger.LogAttrs(ctx, slog.LevelError, "hookd job failed too often; dropped",
			slog.String("delivery_id", j.job.DeliveryID), slog.Int("attempt", j.job.Attempt),
			slog.Int("failures", n), slog.String("error", err.Error()))
		return out, true
	}
	delay := hookd.FailedJobDelay(n)
	l.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd job failed; retrying",
		slog.String("delivery_id", j.job.DeliveryID), slog.Int("attempt", j.job.Attempt),
		slog.Int("failures", n), slog.Duration("retry_in", delay), slog.String("error", err.Error()))
	out.reschedule, out.runAt, out.failures, out.lastError = true, time.Now().Add(delay), n, truncate(err.Error(), 1000)
	return out, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
