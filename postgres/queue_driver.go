package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/jobqueue"
)

// claimsDriver is the queue engine's driver over the schema's hookd_jobs (jobqueue.Driver and
// jobqueue.Listener): a fetch claims jobs under a lease, a settle writes each outcome only if its
// claim still holds, and a listener hears of the jobs other processes enqueue.
type claimsDriver struct {
	s        *Store
	logger   *slog.Logger
	lease    time.Duration
	channel  string // the NOTIFY channel of the schema
	onListen func() // tests: called each time the listener starts listening
}

var (
	_ jobqueue.Driver[claimRef] = (*claimsDriver)(nil)
	_ jobqueue.Listener         = (*claimsDriver)(nil)
)

// claimRef is a job this process claimed: leased by its claims-th claim, its row version at tid
// until its outcome is written. own is the delivery's id when the job is the delivery row's own
// first job (id is then unused), "" for a row of hookd_jobs.
type claimRef struct {
	id     int64
	tid    pgtype.TID
	claims int32
	own    string
}

// Open repairs the jobs (queue_repair.go); it takes nothing: the claims are what keep processes
// apart.
func (d *claimsDriver) Open(ctx context.Context) error {
	if err := d.s.repairJobs(ctx); err != nil {
		return fmt.Errorf("postgres queue: start: %w", err)
	}
	return nil
}

// Close does nothing: a job claimed and not settled is due again when its lease runs out.
func (d *claimsDriver) Close() error { return nil }

// claimJobsSQL claims the due jobs of a lane, oldest first, skipping those another transaction
// has locked, and returns each with the run_at it had and where its new row version is. In the
// first lane it then claims, into the slots the jobs left, the due deliveries that are their own
// first job (hookd_deliveries_first_job, in id order), by moving job_due, which no index holds:
// a HOT update.
//
// The claimed rows are joined to the rows they update by ctid, not by id: the only plan is a
// TID scan per row, whatever the planner believes of the table's size. (Joined by id, the plan
// cached on an almost empty table was a hash join over a sequential scan of the whole table,
// which, in a table with no statistics, it kept as the table grew: measured, the claims and
// outcomes read the whole job table, dead rows included, about 300 pages each.) A row another
// process updated after this statement's snapshot was taken is locked but not updated (its new
// version is not visible to the update): it stays due, for the next claim.
const claimJobsSQL = `WITH jobs AS (
	UPDATE hookd_jobs AS j SET run_at = GREATEST(due.run_at, $3) + $4::interval, claims = j.claims + 1
	FROM (
		SELECT ctid, run_at FROM hookd_jobs WHERE lane = $1 AND run_at <= $2
		ORDER BY run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED
	) AS due
	WHERE j.ctid = due.ctid
	RETURNING j.id, j.ctid, due.run_at, j.delivery_id, j.attempt, j.trigger_kind, j.not_before, j.claims, j.failures
),
own AS (
	UPDATE hookd_deliveries AS d SET job_due = GREATEST(due.job_due, $3) + $4::interval, job_claims = d.job_claims + 1
	FROM (
		SELECT ctid, job_due FROM hookd_deliveries
		WHERE first_job AND status = 'pending' AND (job_due IS NULL OR job_due <= $2)
		ORDER BY id LIMIT CASE WHEN $1 = 'first' THEN greatest($5 - (SELECT count(*) FROM jobs), 0) ELSE 0 END
		FOR UPDATE SKIP LOCKED
	) AS due
	WHERE d.ctid = due.ctid
	RETURNING d.id, d.ctid, coalesce(due.job_due, $3) AS job_due, d.job_claims
)
SELECT id, ctid, run_at, delivery_id, attempt, trigger_kind, not_before, claims, failures, false FROM jobs
UNION ALL
SELECT 0, ctid, job_due, id, 1, 'scheduled', NULL, job_claims, 0, true FROM own`

// Fetch claims up to limit jobs of lane due by horizon, or within half a lease if that is sooner:
// a claimed job is due again when its lease runs out, so the horizon stays well inside a lease,
// and a job claimed early is held until it is due.
func (d *claimsDriver) Fetch(ctx context.Context, lane hookd.Lane, limit int, horizon time.Time) ([]jobqueue.Job[claimRef], error) {
	now := time.Now()
	if h := now.Add(d.lease / 2); h.Before(horizon) {
		horizon = h
	}
	rows, err := d.s.asyncPool.Query(ctx, claimJobsSQL, string(lane), horizon, now, d.lease, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var jobs []jobqueue.Job[claimRef]
	for rows.Next() {
		var (
			j         jobqueue.Job[claimRef]
			trigger   string
			notBefore *time.Time
			attempt   int32
			failures  int32
			own       bool
		)
		if err := rows.Scan(&j.Ref.id, &j.Ref.tid, &j.RunAt, &j.DeliveryID, &attempt, &trigger, &notBefore, &j.Ref.claims, &failures, &own); err != nil {
			return nil, err
		}
		j.Attempt, j.Trigger, j.Failures = int(attempt), hookd.AttemptTrigger(trigger), int(failures)
		if notBefore != nil {
			j.NotBefore = notBefore.UTC()
		}
		if own {
			j.Ref.own = j.DeliveryID
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		// The claim rolled back: nothing was taken.
		return nil, err
	}
	slices.SortFunc(jobs, func(a, b jobqueue.Job[claimRef]) int { return a.RunAt.Compare(b.RunAt) })
	return jobs, nil
}

// finishJobsSQL deletes the finished jobs and reschedules the others, each only if it is still
// leased by the claim that ran it: its row is still the version that claim left (found by ctid,
// a TID scan whatever the planner believes of the table; see claimJobsSQL) and it still has that
// claim's number. A job claimed again meanwhile has a new row version, and a vacuumed slot
// reused by another job has another id. The rule that comes with the ctid: nothing but claims
// and outcomes may update a leased job's row, and a rewrite of the table (VACUUM FULL,
// pg_repack) moves every row; an outcome that misses its row this way matches nothing, and the
// job runs again once its lease runs out (at least once, never lost).
//
// A delivery's own first job is settled on its delivery row by the same rule, which there says
// more: a row version that is no longer the claim's was written since (its attempt recorded,
// its status set, the delivery parked: each of which ended the first job), so the outcome has
// nothing left to do. On the claim's own version, a finished job's first_job is cleared (its
// handler returned without writing the delivery); a job given back is due again at its run_at;
// a snoozed or failed one moves to hookd_jobs, due at its run_at with its failures, so that the
// claims of the first lane never walk over deliveries that wait.
const finishJobsSQL = `WITH done AS (
	DELETE FROM hookd_jobs AS j USING unnest($1::tid[], $2::bigint[], $3::integer[]) AS v (tid, id, claims)
	WHERE j.ctid = v.tid AND j.id = v.id AND j.claims = v.claims
),
again AS (
	UPDATE hookd_jobs AS j SET run_at = v.run_at, failures = v.failures, last_error = v.last_error
	FROM unnest($4::tid[], $5::bigint[], $6::integer[], $7::timestamptz[], $8::integer[], $9::text[])
		AS v (tid, id, claims, run_at, failures, last_error)
	WHERE j.ctid = v.tid AND j.id = v.id AND j.claims = v.claims
),
own AS (
	UPDATE hookd_deliveries AS d SET first_job = v.released, job_due = CASE WHEN v.released THEN v.run_at ELSE d.job_due END
	FROM unnest($10::tid[], $11::text[], $12::integer[], $13::boolean[], $14::boolean[], $15::timestamptz[], $16::integer[], $17::text[])
		AS v (tid, id, claims, released, moved, run_at, failures, last_error)
	WHERE d.ctid = v.tid AND d.id = v.id AND d.job_claims = v.claims AND d.first_job
	RETURNING d.id, v.moved, v.run_at, v.failures, v.last_error
),
moved AS (
	INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, failures, last_error)
	SELECT 'first', run_at, id, 1, 'scheduled', failures, last_error FROM own WHERE moved
)
SELECT 1`

// Settle writes a batch of outcomes in one statement: finished jobs deleted, the others (given
// back ones too) due again at their run_at; the deliveries' own first jobs as finishJobsSQL says.
func (d *claimsDriver) Settle(ctx context.Context, batch []jobqueue.Outcome[claimRef]) error {
	// Rows in id order, so that two processes' statements lock shared rows in one order.
	slices.SortFunc(batch, func(a, b jobqueue.Outcome[claimRef]) int {
		if c := strings.Compare(a.Ref.own, b.Ref.own); c != 0 {
			return c
		}
		return int(min(max(a.Ref.id-b.Ref.id, -1), 1))
	})
	var (
		doneTIDs, againTIDs, ownTIDs []pgtype.TID
		doneIDs                      []int64
		doneClaims                   []int32
		againIDs                     []int64
		againClaims, failures        []int32
		runAts                       []time.Time
		lastErrors                   []string
		ownIDs, ownErrors            []string
		ownClaims, ownFailures       []int32
		ownReleased, ownMoved        []bool
		ownRunAts                    []time.Time
	)
	for _, o := range batch {
		r := o.Ref
		switch {
		case r.own != "":
			ownTIDs, ownIDs, ownClaims = append(ownTIDs, r.tid), append(ownIDs, r.own), append(ownClaims, r.claims)
			ownReleased, ownMoved = append(ownReleased, o.Result == jobqueue.Released), append(ownMoved, o.Result == jobqueue.Again)
			ownRunAts, ownFailures, ownErrors = append(ownRunAts, o.RunAt), append(ownFailures, int32(o.Failures)), append(ownErrors, o.LastError)
		case o.Result == jobqueue.Done:
			doneTIDs, doneIDs, doneClaims = append(doneTIDs, r.tid), append(doneIDs, r.id), append(doneClaims, r.claims)
		default:
			againTIDs, againIDs, againClaims, runAts = append(againTIDs, r.tid), append(againIDs, r.id), append(againClaims, r.claims), append(runAts, o.RunAt)
			failures, lastErrors = append(failures, int32(o.Failures)), append(lastErrors, o.LastError)
		}
	}
	_, err := d.s.asyncPool.Exec(ctx, finishJobsSQL, tidArray(doneTIDs), int64Array(doneIDs), doneClaims,
		tidArray(againTIDs), int64Array(againIDs), againClaims, timeArray(runAts), failures, textArray(lastErrors),
		tidArray(ownTIDs), textArray(ownIDs), ownClaims, ownReleased, ownMoved, timeArray(ownRunAts), ownFailures, textArray(ownErrors))
	return err
}

// Listen wakes this process's lanes on the notifications of the schema's channel, on a
// connection of its own, until ctx ends. After it (re)connects it wakes every lane, for what was
// notified meanwhile.
func (d *claimsDriver) Listen(ctx context.Context, wake func(hookd.Lane)) {
	for {
		err := d.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		d.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: listening for new jobs failed; polling until it reconnects",
			slog.String("error", err.Error()), slog.Duration("retry_in", listenRetry))
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenRetry):
		}
	}
}

func (d *claimsDriver) listenOnce(ctx context.Context, wake func(hookd.Lane)) error {
	c, err := pgx.ConnectConfig(ctx, d.s.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{d.channel}.Sanitize()); err != nil {
		return err
	}
	if d.onListen != nil {
		d.onListen()
	}
	for _, l := range jobqueue.Lanes {
		wake(l)
	}
	for {
		n, err := c.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		for _, l := range jobqueue.Lanes {
			if string(l) == n.Payload {
				wake(l)
			}
		}
	}
}
