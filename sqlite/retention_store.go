package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.MessageRetainer = (*Store)(nil)

// retentionStepTime is what one step of DeleteOldMessages (a few messages with their cascades)
// should take: while it runs, a send or an attempt record that wants the one write connection
// waits for it. retentionTxTime bounds a whole transaction of steps when no one waits.
const (
	retentionStepTime = time.Millisecond
	retentionTxTime   = 5 * time.Millisecond
	retentionMaxStep  = 64
)

// DeleteOldMessages deletes at most limit messages created before before, none of whose
// deliveries is pending, oldest first, with their deliveries, attempts, jobs (a manual retry
// still queued), channel and tag rows (hookd.MessageRetainer). It is a background write that
// yields the write connection: it deletes a few messages at a time (a step, sized to take about
// retentionStepTime on this file's measured cost per message) and commits after the step in which
// another transaction began to wait for the connection (a send, an attempt record), or once
// retentionTxTime passed, so it may return fewer than limit with more left.
func (s *Store) DeleteOldMessages(ctx context.Context, before time.Time, limit int) (hookd.RetentionCount, error) {
	var (
		n       hookd.RetentionCount
		drained bool // no old message is left
	)
	err := s.InTx(hookd.BackgroundWrite(ctx), func(tx hookd.Tx) error {
		q := tx.(*txn).sqlTx
		start := time.Now()
		for n.Messages < limit {
			step := int(s.retention.step.Load())
			if step <= 0 {
				step = retentionStepStart
			}
			step = min(step, limit-n.Messages)
			took := time.Now()
			got, err := deleteOldStep(ctx, q, before, step)
			if err != nil {
				return err
			}
			n.Messages += got.Messages
			n.Deliveries += got.Deliveries
			n.Attempts += got.Attempts
			if got.Messages < step {
				drained = true
				return nil
			}
			s.retention.step.Store(int64(nextStep(step, time.Since(took))))
			// Checked after a step, so that each turn of the connection deletes at least one.
			if s.gate.waiting() || time.Since(start) >= retentionTxTime {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return hookd.RetentionCount{}, fmt.Errorf("delete old messages: %w", err)
	}
	if drained {
		// No old message is left: the hourly attempt counts of the same age follow, in
		// transactions of their own (endpoint_hours.go).
		if _, err := s.DeleteOldEndpointHours(ctx, before); err != nil {
			return n, err
		}
	}
	return n, nil
}

// nextStep is the size of the next step after one of step messages took took: about
// retentionStepTime at the measured cost per message, at most twice the last step (a cold page
// cache makes the first steps dear), within 1 and retentionMaxStep.
func nextStep(step int, took time.Duration) int {
	next := retentionMaxStep
	if took > 0 {
		next = int(int64(step) * int64(retentionStepTime) / int64(took))
	}
	return max(1, min(next, 2*step, retentionMaxStep))
}

// deleteOldStep deletes up to limit old messages in q, as DeleteOldMessages.
func deleteOldStep(ctx context.Context, q *sql.Tx, before time.Time, limit int) (hookd.RetentionCount, error) {
	var n hookd.RetentionCount
	rows, err := q.QueryContext(ctx, `SELECT m.id FROM hookd_messages m WHERE m.created_at < ? AND NOT EXISTS (
			SELECT 1 FROM hookd_deliveries d WHERE d.message_id = m.id AND d.status = 'pending')
		ORDER BY m.created_at LIMIT ?`, micros(before), limit)
	if err != nil {
		return n, classify(err)
	}
	var ids []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return n, classify(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return n, classify(err)
	}
	in := placeholders(len(ids))
	n.Messages = len(ids)
	// The attempts and deliveries go by statements of their own, which count them as they go,
	// before the messages (whose cascade then finds none); the channel and tag rows go by the
	// cascade.
	if _, err := q.ExecContext(ctx, `DELETE FROM hookd_jobs WHERE delivery_id IN (
		SELECT id FROM hookd_deliveries WHERE message_id IN (`+in+`))`, ids...); err != nil {
		return n, classify(err)
	}
	for _, d := range []struct {
		table string
		n     *int
	}{{"hookd_attempts", &n.Attempts}, {"hookd_deliveries", &n.Deliveries}} {
		res, err := q.ExecContext(ctx, `DELETE FROM `+d.table+` WHERE message_id IN (`+in+`)`, ids...)
		if err != nil {
			return n, classify(err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, classify(err)
		}
		*d.n = int(k)
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM hookd_messages WHERE id IN (`+in+`)`, ids...); err != nil {
		return n, classify(err)
	}
	return n, nil
}

// retentionState is what a Store keeps of its cleaner between calls.
type retentionState struct {
	// step is the size of the next step (0: retentionStepStart).
	step atomic.Int64
}

// retentionStepStart is the first step's size, before any is measured.
const retentionStepStart = 4
