package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.MessageRetainer = (*Store)(nil)

// DeleteOldMessages deletes at most limit messages created before before, none of whose
// deliveries is pending, oldest first, in one transaction (hookd.MessageRetainer). The
// transaction first takes the schema's retention advisory lock with pg_try_advisory_xact_lock:
// when another process holds it, that process is deleting and this one returns zero counts, so
// one cleaner runs at a time. It then locks the batch's messages (FOR UPDATE SKIP LOCKED) and reads
// their ids, and deletes by those ids, in one statement, their attempts, queued jobs (a manual
// retry; hookd_jobs has no foreign key), deliveries and the messages (channel and tag rows go by
// the foreign keys' cascade), counting each, each by an index on the ids given.
func (s *Store) DeleteOldMessages(ctx context.Context, before time.Time, limit int) (hookd.RetentionCount, error) {
	var (
		n      hookd.RetentionCount
		locked bool // this process holds the cleaner's lock
	)
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		q := tx.(*txn).c
		if err := q.queryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, retentionLockKey(s.schema)).Scan(&locked); err != nil || !locked {
			return classify(err)
		}
		// The batch's statements walk indexes by key, planned for the batch's size, whatever the
		// tables' statistics: a generic plan of LIMIT $2 assumes a tenth of the table, and on tables
		// never analysed (autovacuum off) = ANY of 100 ids is priced as half the table; either read
		// every message, delivery or attempt, 1-4 s a batch (measured on 200,000 messages). So
		// plans are custom and scans of whole tables priced out (as for the queue's statements,
		// queuePlanParams); only hookd_jobs, small and without an index on delivery_id, is read
		// whole. The commit does not wait for the WAL flush: a batch lost in a crash is deleted
		// again by the next pass, and the sends' commits do not queue behind its flush.
		if err := q.queryRow(ctx, `SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
			set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
			set_config('enable_mergejoin', 'off', true), set_config('synchronous_commit', 'off', true)`).
			Scan(new(string), new(string), new(string), new(string), new(string)); err != nil {
			return classify(err)
		}
		var ids []string
		if err := q.queryRow(ctx, `SELECT coalesce(array_agg(id), '{}') FROM (
				SELECT m.id FROM hookd_messages m WHERE m.created_at < $1 AND NOT EXISTS (
					SELECT 1 FROM hookd_deliveries d WHERE d.message_id = m.id AND d.status = 'pending')
				ORDER BY m.created_at LIMIT $2 FOR UPDATE SKIP LOCKED) batch`, before, limit).Scan(&ids); err != nil || len(ids) == 0 {
			return classify(err)
		}
		if err := q.queryRow(ctx, `WITH
			attempts AS (DELETE FROM hookd_attempts WHERE message_id = ANY($1) RETURNING 1),
			jobs AS (DELETE FROM hookd_jobs WHERE delivery_id IN (
				SELECT id FROM hookd_deliveries WHERE message_id = ANY($1))),
			deliveries AS (DELETE FROM hookd_deliveries WHERE message_id = ANY($1) RETURNING 1),
			messages AS (DELETE FROM hookd_messages WHERE id = ANY($1) RETURNING 1)
			SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM deliveries), (SELECT count(*) FROM attempts)`,
			ids).Scan(&n.Messages, &n.Deliveries, &n.Attempts); err != nil {
			return classify(err)
		}
		return nil
	})
	if err != nil {
		return hookd.RetentionCount{}, fmt.Errorf("delete old messages: %w", err)
	}
	if n.Messages < limit && locked {
		// No old message is left: the hourly attempt counts of the same age follow, in
		// transactions of their own (endpoint_hours.go).
		if _, err := s.DeleteOldEndpointHours(ctx, before); err != nil {
			return n, err
		}
	}
	return n, nil
}

// retentionLockKey is the advisory lock key of the retention cleaner in schema, apart from the
// migrations' key.
func retentionLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("hookd retention\x00" + schema))
	return int64(h.Sum64())
}
