package postgres

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobrun"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// lane claims and runs the jobs of one hookd lane with up to workers at once.
type lane struct {
	q       *Queue
	name    hookd.Lane
	workers int
	poll    time.Duration
	wake    jobrun.Signal // fetch now rather than at the next poll

	mu   sync.Mutex
	busy int // worker slots taken
}

func newLane(q *Queue, name hookd.Lane, workers int, poll time.Duration) *lane {
	return &lane{q: q, name: name, workers: workers, poll: poll, wake: jobrun.NewSignal()}
}

// reset frees every slot (Start).
func (l *lane) reset() {
	l.mu.Lock()
	l.busy = 0
	l.mu.Unlock()
}

// claimedJob is a job this process claimed: due at runAt, leased by its claims-th claim, whose
// row version is at tid until its outcome is written.
type claimedJob struct {
	id       int64
	tid      pgtype.TID
	job      hookd.Job
	runAt    time.Time
	claims   int32
	failures int32
}

// fetchLoop claims due jobs into free worker slots until stop is closed. (After every claim it
// pauses 2 ms, also after an empty one: without that pause after empty claims, B3's p50 fell from
// about 6 to 4.5 ms but B1 lost about a tenth of its deliveries a second, its claims smaller.)
func (l *lane) fetchLoop(ctx context.Context, stop <-chan struct{}, h hookd.JobHandler) {
	jobrun.FetchLoop(ctx, stop, l.wake, l.poll, fetchCooldown, l.claim,
		func(j claimedJob) { l.q.run.Job(func() { l.run(ctx, j, h) }) },
		func(err error) {
			l.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: claiming jobs failed", slog.String("lane", string(l.name)), slog.String("error", err.Error()))
		})
}

// claimJobsSQL claims the due jobs of a lane, oldest first, skipping those another transaction
// has locked, and returns each with the run_at it had and where its new row version is.
//
// The claimed rows are joined to the rows they update by ctid, not by id: the only plan is a
// TID scan per row, whatever the planner believes of the table's size. (Joined by id, the plan
// cached on an almost empty table was a hash join over a sequential scan of the whole table,
// which, in a table with no statistics, it kept as the table grew: measured, the claims and
// outcomes read the whole job table, dead rows included, about 300 pages each.) A row another
// process updated after this statement's snapshot was taken is locked but not updated (its new
// version is not visible to the update): it stays due, for the next claim.
const claimJobsSQL = `UPDATE hookd_jobs AS j SET run_at = GREATEST(due.run_at, $3) + $4::interval, claims = j.claims + 1
FROM (
	SELECT ctid, run_at FROM hookd_jobs WHERE lane = $1 AND run_at <= $2
	ORDER BY run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED
) AS due
WHERE j.ctid = due.ctid
RETURNING j.id, j.ctid, due.run_at, j.delivery_id, j.attempt, j.trigger_kind, j.not_before, j.claims, j.failures`

// claim takes the jobs due within two poll intervals, as many as there are free slots, and a slot
// for each. full says that the claim filled every free slot, so more may be due.
func (l *lane) claim(ctx context.Context) (jobs []claimedJob, full bool, err error) {
	l.mu.Lock()
	free := min(l.workers-l.busy, maxClaim)
	l.busy += max(free, 0)
	l.mu.Unlock()
	if free <= 0 {
		return nil, false, nil
	}
	defer func() {
		l.mu.Lock()
		l.busy -= free - len(jobs)
		l.mu.Unlock()
	}()
	// A claimed job is due again when its lease runs out, so the horizon stays well inside a
	// lease: a job claimed early is held until it is due.
	now := time.Now()
	horizon := now.Add(min(2*l.poll, l.q.lease/2))
	rows, err := l.q.s.asyncPool.Query(ctx, claimJobsSQL, string(l.name), horizon, now, l.q.lease, free)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			j         claimedJob
			trigger   string
			notBefore *time.Time
			attempt   int32
		)
		if err := rows.Scan(&j.id, &j.tid, &j.runAt, &j.job.DeliveryID, &attempt, &trigger, &notBefore, &j.claims, &j.failures); err != nil {
			return nil, false, err
		}
		j.job.Attempt, j.job.Trigger = int(attempt), hookd.AttemptTrigger(trigger)
		if notBefore != nil {
			j.job.NotBefore = notBefore.UTC()
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		// The claim rolled back: nothing was taken.
		return nil, false, err
	}
	slices.SortFunc(jobs, func(a, b claimedJob) int { return a.runAt.Compare(b.runAt) })
	return jobs, len(jobs) == free, nil
}

// run holds j until it is due, works it with h, and hands the outcome to the finisher.
func (l *lane) run(ctx context.Context, j claimedJob, h hookd.JobHandler) {
	out := l.work(ctx, j, h)
	l.mu.Lock()
	l.busy--
	l.mu.Unlock()
	l.wake.Raise()
	l.q.fin.Add(out)
}

// work returns the outcome to write for j.
func (l *lane) work(ctx context.Context, j claimedJob, h hookd.JobHandler) outcome {
	out := outcome{id: j.id, tid: j.tid, claims: j.claims}
	// Stopped before or during the job: give it back, due at once, as it was.
	giveBack := func() outcome {
		out.reschedule, out.runAt, out.failures = true, time.Now(), j.failures
		return out
	}
	if wait := time.Until(j.runAt); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			out.runAt = j.runAt
			out.reschedule, out.failures = true, j.failures
			return out
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		return giveBack()
	}
	hctx, cancel := context.WithTimeout(ctx, l.q.timeout)
	err := h(hctx, j.job)
	cancel()
	if err == nil {
		return out
	}
	if d, ok := hookd.AsSnooze(err); ok {
		out.reschedule, out.runAt, out.failures = true, time.Now().Add(max(d, time.Millisecond)), j.failures
		return out
	}
	if ctx.Err() != nil {
		return giveBack()
	}
	n := j.failures + 1
	if n >= maxFailures {
		l.q.logger.LogAttrs(ctx, slog.LevelError, "hookd job failed too often; dropped",
			slog.String("delivery_id", j.job.DeliveryID), slog.Int("attempt", j.job.Attempt),
			slog.Int("failures", int(n)), slog.String("error", err.Error()))
		return out
	}
	delay := hookd.FailedJobDelay(int(n))
	l.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd job failed; retrying",
		slog.String("delivery_id", j.job.DeliveryID), slog.Int("attempt", j.job.Attempt),
		slog.Int("failures", int(n)), slog.Duration("retry_in", delay), slog.String("error", err.Error()))
	out.reschedule, out.runAt, out.failures, out.lastError = true, time.Now().Add(delay), n, sqlcodec.Text(err.Error(), 1000)
	return out
}
