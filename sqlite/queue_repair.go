package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookd/hookd"
)

// A pending delivery has a way to its next attempt: a job (a row of hookd_jobs, or the delivery
// row itself while it is its own first job), or, on an ordered endpoint, its place behind an
// earlier pending delivery (parked: no next attempt time, no job; see ordered.go in the root
// package). What a running queue writes keeps it so; an earlier queue design (River's table),
// a file restored from a copy, or a bug may leave a delivery with neither, which would wait
// forever. So the queue repairs its jobs when it starts, before its first fetch: it moves the
// jobs River's table holds into hookd_jobs (adoptRiverJobs), then gives a job to every pending
// delivery that needs one (repairJobsSQL).

// repairJobsSQL queues the next attempt of every pending delivery that has no job for it and
// is not parked behind an earlier pending delivery of its ordered endpoint (or of an endpoint
// gone, whose parked deliveries are cancelled one after another): attempt its attempts + 1, in
// the first lane when it has none yet, else the retry lane, due at its next attempt time, or
// at once (?1, now) when that is unset or past. An ordered endpoint's head, the lowest pending
// id, is never parked behind another, so a head left without a job gets one, parked or not.
//
// A job counts when it makes that attempt: a row of hookd_jobs that is not a manual attempt,
// or the delivery's own first job. A row for another attempt is stale, and the worker drops it.
// The walk reads the pending deliveries only (hookd_deliveries_pending); the jobs are read once
// into a temporary index (the NOT IN list); a parked delivery's earlier pending one is a lookup
// in hookd_deliveries_endpoint_pending.
const repairJobsSQL = `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
	SELECT CASE WHEN d.attempts = 0 THEN 'first' ELSE 'retry' END,
		MAX(?1, COALESCE(d.next_attempt_at, 0)), d.id, d.attempts + 1, 'scheduled',
		CASE WHEN d.next_attempt_at > ?1 THEN d.next_attempt_at END
	FROM hookd_deliveries AS d
	WHERE d.status = 'pending'
		AND NOT (d.first_job AND d.attempts = 0)
		AND (d.id, d.attempts + 1) NOT IN (SELECT delivery_id, attempt FROM hookd_jobs WHERE trigger_kind <> 'manual')
		AND NOT (d.next_attempt_at IS NULL
			AND EXISTS (SELECT 1 FROM hookd_deliveries AS e
				WHERE e.endpoint_id = d.endpoint_id AND e.status = 'pending' AND e.id < d.id)
			AND NOT EXISTS (SELECT 1 FROM hookd_endpoints AS ep WHERE ep.id = d.endpoint_id AND NOT ep.ordered))
	ORDER BY d.id`

// repairedMessage is the line the repair logs, at Warn, when it queued jobs.
const repairedMessage = "hookd queue: gave a job to each pending delivery that had none"

// repairJobs adopts River's jobs (adoptRiverJobs), then queues a job for every pending delivery
// left without one (repairJobsSQL) in one transaction, and logs how many it found. The queue
// runs it when it starts, under the store's queue lock, so no job of the file is running.
func (s *Store) repairJobs(ctx context.Context) error {
	if err := adoptRiverJobs(ctx, s.db, s.logger); err != nil {
		return err
	}
	var n int64
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		res, err := tx.(*txn).sqlTx.ExecContext(ctx, repairJobsSQL, time.Now().UnixMicro())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("repair jobs: %w", err)
	}
	if n > 0 {
		s.logger.LogAttrs(ctx, slog.LevelWarn, repairedMessage, slog.Int64("deliveries", n))
	}
	return nil
}

// adoptRiverJobs moves the delivery jobs that an earlier hookd left in River's table (river_job,
// when hookd ran on River in this file) into hookd_jobs, in one transaction: jobs not yet
// finalized become due at once (or at their NotBefore), keeping their lane and attempt. River's
// tables stay, holding whatever else they hold. A file without river_job is left alone.
func adoptRiverJobs(ctx context.Context, db *sql.DB, logger *slog.Logger) error {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'river_job'`).Scan(&n); err != nil {
		return fmt.Errorf("adopt river jobs: %w", err)
	}
	if n == 0 {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("adopt river jobs: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	const pending = `kind = 'hookd_attempt' AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`
	now := time.Now().UnixMicro()
	res, err := tx.ExecContext(ctx, `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt, trigger_kind, not_before)
		SELECT CASE queue WHEN 'hookd_retry' THEN 'retry' WHEN 'hookd_manual' THEN 'manual' ELSE 'first' END,
			MAX(?, COALESCE(json_extract(args, '$.nb'), 0)),
			json_extract(args, '$.d'), json_extract(args, '$.a'), COALESCE(json_extract(args, '$.t'), ''),
			json_extract(args, '$.nb')
		FROM river_job WHERE `+pending+` AND json_extract(args, '$.d') IS NOT NULL ORDER BY id`, now)
	if err != nil {
		return fmt.Errorf("adopt river jobs: copy: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM river_job WHERE `+pending); err != nil {
		return fmt.Errorf("adopt river jobs: delete: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("adopt river jobs: commit: %w", err)
	}
	if moved, _ := res.RowsAffected(); moved > 0 {
		logger.InfoContext(ctx, "hookd jobs moved from River's table to hookd_jobs", "jobs", moved)
	}
	return nil
}
