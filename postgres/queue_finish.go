package postgres

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// outcome is what became of one claimed job: deleted (worked, or dropped), or due again at runAt.
type outcome struct {
	id         int64
	tid        pgtype.TID // the row version the claim left
	claims     int32
	reschedule bool
	runAt      time.Time
	failures   int32
	lastError  string
}

// finishJobsSQL deletes the finished jobs and reschedules the others, each only if it is still
// leased by the claim that ran it: its row is still the version that claim left (found by ctid,
// a TID scan whatever the planner believes of the table; see claimJobsSQL) and it still has that
// claim's number. A job claimed again meanwhile has a new row version, and a vacuumed slot
// reused by another job has another id. The rule that comes with the ctid: nothing but claims
// and outcomes may update a leased job's row, and a rewrite of the table (VACUUM FULL,
// pg_repack) moves every row; an outcome that misses its row this way matches nothing, and the
// job runs again once its lease runs out (at least once, never lost).
const finishJobsSQL = `WITH done AS (
	DELETE FROM hookd_jobs AS j USING unnest($1::tid[], $2::bigint[], $3::integer[]) AS v (tid, id, claims)
	WHERE j.ctid = v.tid AND j.id = v.id AND j.claims = v.claims
),
again AS (
	UPDATE hookd_jobs AS j SET run_at = v.run_at, failures = v.failures, last_error = v.last_error
	FROM unnest($4::tid[], $5::bigint[], $6::integer[], $7::timestamptz[], $8::integer[], $9::text[])
		AS v (tid, id, claims, run_at, failures, last_error)
	WHERE j.ctid = v.tid AND j.id = v.id AND j.claims = v.claims
)
SELECT 1`

// flush writes a batch of outcomes in one statement (jobrun.Finisher's flush).
func (q *Queue) flush(batch []outcome) error {
	// Rows in id order, so that two processes' statements lock shared rows in one order.
	slices.SortFunc(batch, func(a, b outcome) int { return int(min(max(a.id-b.id, -1), 1)) })
	var (
		doneTIDs, againTIDs   []pgtype.TID
		doneIDs               []int64
		doneClaims            []int32
		againIDs              []int64
		againClaims, failures []int32
		runAts                []time.Time
		lastErrors            []string
	)
	for _, o := range batch {
		if !o.reschedule {
			doneTIDs, doneIDs, doneClaims = append(doneTIDs, o.tid), append(doneIDs, o.id), append(doneClaims, o.claims)
			continue
		}
		againTIDs, againIDs, againClaims, runAts = append(againTIDs, o.tid), append(againIDs, o.id), append(againClaims, o.claims), append(runAts, o.runAt)
		failures, lastErrors = append(failures, o.failures), append(lastErrors, o.lastError)
	}
	ctx := context.Background()
	_, err := q.s.asyncPool.Exec(ctx, finishJobsSQL, doneTIDs, doneIDs, doneClaims, againTIDs, againIDs, againClaims, runAts, failures, lastErrors)
	if err != nil {
		q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: writing job outcomes failed; trying again",
			slog.Int("jobs", len(batch)), slog.String("error", err.Error()))
		return err
	}
	return nil
}
