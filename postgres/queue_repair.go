package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
)

// A pending delivery has a way to its next attempt: a job (a row of hookd_jobs, or the delivery
// row itself while it is its own first job), or, on an ordered endpoint, its place behind an
// earlier pending delivery (parked: no next attempt time, no job; see ordered.go in the root
// package). What a running queue writes keeps it so; an earlier queue design (River's table,
// where hookd kept its jobs before hookd_jobs), a database restored from a dump, or a bug may
// leave a delivery with neither, which would wait forever. So the queue repairs its jobs when it
// starts, before its first claim, in one transaction under an advisory lock of the schema: it
// moves the jobs River's table holds into hookd_jobs (adoptRiverJobsSQL), then gives a job to
// every pending delivery that needs one (repairJobsSQL). Processes that start at once repair one
// after another, and the later ones find nothing to do. A process that is already running is
// never caught between two writes: each of its transactions leaves a pending delivery's job (or
// its park) in place as it commits. Should a delivery still get a second job for an attempt, the
// worker makes the attempt once: a job whose attempt is already recorded is dropped.

// riverJobKind, and the River queues below, are those hookd's jobs had when they were rows of
// river_job (package riverqueue): args {"d": delivery id, "a": attempt, "t": trigger, "nb":
// NotBefore in Unix microseconds}.
const riverJobKind = "hookd_attempt"

// adoptRiverJobsSQL moves hookd's jobs that River has not finished (any state but completed,
// cancelled and discarded; compared as text, since an older River's enum may lack a state) from
// river_job (%s, in the store's schema) to hookd_jobs, in one statement: each is deleted from
// river_job, so that a River queue started later never runs it again, and inserted with its
// lane (by its River queue), attempt, trigger and NotBefore, due at its NotBefore or River's
// scheduled_at, whichever is later. A job that another already makes is deleted and not
// inserted: the delivery's own first job (a delivery that River's queue carried was its own
// first job as well, by default) or a row of hookd_jobs for the same attempt. So is a job
// without a delivery or an attempt, which no worker could make; the repair that follows gives
// its delivery a job, if it is pending. Only rows of hookd's kind are touched; River's tables
// stay, with whatever else they hold. The two queues do not share a schema at once: a River queue
// still running on it loses its unfinished jobs to the first store's queue that starts.
const adoptRiverJobsSQL = `WITH moved AS (
	DELETE FROM %s AS r
	WHERE r.kind = '` + riverJobKind + `' AND r.state::text IN ('available', 'pending', 'retryable', 'running', 'scheduled')
	RETURNING r.id, r.queue, r.scheduled_at, r.args
),
jobs AS (
	SELECT m.id,
		CASE m.queue WHEN 'hookd_retry' THEN 'retry' WHEN 'hookd_manual' THEN 'manual' ELSE 'first' END AS lane,
		m.args->>'d' AS delivery_id, (m.args->>'a')::integer AS attempt, coalesce(m.args->>'t', '') AS trigger_kind,
		timestamptz 'epoch' + (m.args->>'nb')::bigint * interval '1 microsecond' AS not_before, m.scheduled_at
	FROM moved AS m
	WHERE m.args->>'d' IS NOT NULL AND m.args->>'a' IS NOT NULL
)
INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
SELECT j.lane, GREATEST(j.scheduled_at, j.not_before), j.delivery_id, j.attempt, j.trigger_kind, j.not_before
FROM jobs AS j
WHERE j.trigger_kind = 'manual' OR NOT (
	EXISTS (SELECT 1 FROM hookd_deliveries AS d
		WHERE d.id = j.delivery_id AND j.attempt = 1 AND d.first_job AND d.status = 'pending' AND d.attempts = 0)
	OR EXISTS (SELECT 1 FROM hookd_jobs AS h
		WHERE h.delivery_id = j.delivery_id AND h.attempt = j.attempt AND h.trigger_kind <> 'manual'))
ORDER BY j.id`

// repairJobsSQL queues the next attempt of every pending delivery that has no job for it and
// is not parked behind an earlier pending delivery of its ordered endpoint (or of an endpoint
// gone, whose parked deliveries are cancelled one after another): attempt its attempts + 1, in
// the first lane when it has none yet, else the retry lane, due at its next attempt time, or
// at once ($1, now) when that is unset or past. An ordered endpoint's head, the lowest pending
// id, is never parked behind another, so a head left without a job gets one, parked or not.
//
// A job counts when it makes that attempt: a row of hookd_jobs that is not a manual attempt,
// or the delivery's own first job. A row for another attempt is stale, and the worker drops it.
// The walk reads the pending deliveries only (hookd_deliveries_pending), against the job table
// read once (a hash anti-join: the table holds the work waiting, not the log); a parked
// delivery's earlier pending one is a lookup in hookd_deliveries_endpoint_id_undelivered.
// TestRepairPlanReadsPendingDeliveriesOnly checks the plan.
const repairJobsSQL = `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
SELECT CASE WHEN d.attempts = 0 THEN 'first' ELSE 'retry' END,
	GREATEST($1, d.next_attempt_at), d.id, d.attempts + 1, 'scheduled',
	CASE WHEN d.next_attempt_at > $1 THEN d.next_attempt_at END
FROM hookd_deliveries AS d
WHERE d.status = 'pending'
	AND NOT (d.first_job AND d.attempts = 0)
	AND NOT EXISTS (SELECT 1 FROM hookd_jobs AS j
		WHERE j.delivery_id = d.id AND j.attempt = d.attempts + 1 AND j.trigger_kind <> 'manual')
	AND NOT (d.next_attempt_at IS NULL
		AND EXISTS (SELECT 1 FROM hookd_deliveries AS e
			WHERE e.endpoint_id = d.endpoint_id AND e.status = 'pending' AND e.id < d.id)
		AND NOT EXISTS (SELECT 1 FROM hookd_endpoints AS ep WHERE ep.id = d.endpoint_id AND NOT ep.ordered))
ORDER BY d.id`

// repairedMessage is the line the repair logs, at Warn, when it queued jobs.
const repairedMessage = "hookd queue: gave a job to each pending delivery that had none"

// repairLockKey is the advisory lock key of the queue's repair in schema, apart from the other
// schemas' and from the migrations' (migrationLockKey).
func repairLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("hookd queue repair\x00" + schema))
	return int64(h.Sum64())
}

// repairJobs adopts River's jobs and queues a job for every pending delivery left without one,
// in one transaction under the schema's repair lock, and logs how many of each it found. The
// queue runs it when it starts. It runs on the store's pool, not the queue's: the plan it wants
// (a hash anti-join over the job table) is one that pool rules out for its own statements.
func (s *Store) repairJobs(ctx context.Context) error {
	var adopted, repaired int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, repairLockKey(s.schema)); err != nil {
			return fmt.Errorf("take the repair lock: %w", err)
		}
		river := pgx.Identifier{s.schema, "river_job"}.Sanitize()
		var hasRiver bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1::text) IS NOT NULL`, river).Scan(&hasRiver); err != nil {
			return fmt.Errorf("look for river_job: %w", err)
		}
		if hasRiver {
			tag, err := tx.Exec(ctx, fmt.Sprintf(adoptRiverJobsSQL, river))
			if err != nil {
				return fmt.Errorf("move River's jobs: %w", err)
			}
			adopted = tag.RowsAffected()
		}
		tag, err := tx.Exec(ctx, repairJobsSQL, time.Now())
		if err != nil {
			return err
		}
		repaired = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return fmt.Errorf("repair jobs: %w", classify(err))
	}
	if adopted > 0 {
		s.logger.LogAttrs(ctx, slog.LevelInfo, "hookd jobs moved from River's table to hookd_jobs", slog.Int64("jobs", adopted))
	}
	if repaired > 0 {
		s.logger.LogAttrs(ctx, slog.LevelWarn, repairedMessage, slog.Int64("deliveries", repaired))
	}
	return nil
}

// riverRepairPage is how many deliveries one read of the River queue's repair takes.
const riverRepairPage = 1000

// riverRepairSQL reads, after $1 in id order, at most $2 pending deliveries that a River queue
// must give a job: those with no unfinished job of hookd's kind in river_job for their next
// attempt (River reads neither hookd_jobs nor a delivery's own first job) that are not parked
// behind an earlier pending delivery, as repairJobsSQL decides. A job is found through River's
// index of args (GIN, containment).
const riverRepairSQL = `SELECT d.id, d.attempts, d.next_attempt_at FROM hookd_deliveries AS d
WHERE d.status = 'pending' AND d.id > $1
	AND NOT EXISTS (SELECT 1 FROM river_job AS r
		WHERE r.args @> jsonb_build_object('d', d.id, 'a', d.attempts + 1) AND r.kind = '` + riverJobKind + `'
			AND r.state::text IN ('available', 'pending', 'retryable', 'running', 'scheduled')
			AND r.args->>'t' IS DISTINCT FROM 'manual')
	AND NOT (d.next_attempt_at IS NULL
		AND EXISTS (SELECT 1 FROM hookd_deliveries AS e
			WHERE e.endpoint_id = d.endpoint_id AND e.status = 'pending' AND e.id < d.id)
		AND NOT EXISTS (SELECT 1 FROM hookd_endpoints AS ep WHERE ep.id = d.endpoint_id AND NOT ep.ordered))
ORDER BY d.id LIMIT $2`

// repairRiverJobs is repairJobs for a River queue (q): every pending delivery left without a
// job in river_job gets one, inserted through q, in one transaction under the schema's repair
// lock; it logs how many it found. River's queue runs it when it starts.
func (s *Store) repairRiverJobs(ctx context.Context, q hookd.Queue) error {
	var repaired int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, repairLockKey(s.schema)); err != nil {
			return fmt.Errorf("take the repair lock: %w", err)
		}
		wrapped, err := s.WrapTx(tx)
		if err != nil {
			return err
		}
		now := time.Now()
		for after := ""; ; {
			rows, err := tx.Query(ctx, riverRepairSQL, after, riverRepairPage)
			if err != nil {
				return err
			}
			var jobs []hookd.Job
			for rows.Next() {
				var (
					j        = hookd.Job{Trigger: hookd.TriggerScheduled}
					attempts int32
					next     *time.Time
				)
				if err := rows.Scan(&j.DeliveryID, &attempts, &next); err != nil {
					rows.Close()
					return err
				}
				j.Attempt = int(attempts) + 1
				if next != nil && next.After(now) {
					j.NotBefore = *next
				}
				jobs = append(jobs, j)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if len(jobs) > 0 {
				if err := q.EnqueueTx(ctx, wrapped, jobs); err != nil {
					return err
				}
			}
			repaired += len(jobs)
			if len(jobs) < riverRepairPage {
				return nil
			}
			after = jobs[len(jobs)-1].DeliveryID
		}
	})
	if err != nil {
		return fmt.Errorf("repair jobs: %w", classify(err))
	}
	if repaired > 0 {
		s.logger.LogAttrs(ctx, slog.LevelWarn, repairedMessage, slog.Int("deliveries", repaired))
	}
	return nil
}
