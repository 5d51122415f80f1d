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
// one cleaner runs at a time. Deliveries, attempts, channel and tag rows go by the foreign keys'
// cascade; jobs in hookd_jobs (a manual retry still queued) are deleted here.
func (s *Store) DeleteOldMessages(ctx context.Context, before time.Time, limit int) (hookd.RetentionCount, error) {
	if _, err := s.DeleteOldEndpointHours(ctx, before); err != nil { // endpoint_hours.go
		return hookd.RetentionCount{}, err
	}
	var n hookd.RetentionCount
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		q := tx.(*txn).c
		var locked bool
		if err := q.queryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, retentionLockKey(s.schema)).Scan(&locked); err != nil || !locked {
			return classify(err)
		}
		return classify(q.queryRow(ctx, `WITH batch AS (
				SELECT m.id FROM hookd_messages m WHERE m.created_at < $1 AND NOT EXISTS (
					SELECT 1 FROM hookd_deliveries d WHERE d.message_id = m.id AND d.status = 'pending')
				ORDER BY m.created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
			deliveries AS (SELECT id FROM hookd_deliveries WHERE message_id IN (SELECT id FROM batch)),
			jobs AS (DELETE FROM hookd_jobs WHERE delivery_id IN (SELECT id FROM deliveries)),
			messages AS (DELETE FROM hookd_messages WHERE id IN (SELECT id FROM batch) RETURNING id)
			SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM deliveries),
				(SELECT count(*) FROM hookd_attempts WHERE message_id IN (SELECT id FROM batch))`,
			before, limit).Scan(&n.Messages, &n.Deliveries, &n.Attempts))
	})
	if err != nil {
		return hookd.RetentionCount{}, fmt.Errorf("delete old messages: %w", err)
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
