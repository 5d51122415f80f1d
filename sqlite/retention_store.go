package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

var _ hookd.MessageRetainer = (*Store)(nil)

// DeleteOldMessages deletes at most limit messages created before before, none of whose
// deliveries is pending, oldest first, in one transaction (hookd.MessageRetainer). Their
// deliveries, attempts, channel and tag rows go by the foreign keys' cascade; their jobs (a
// manual retry still queued) are deleted here, since hookd_jobs has no foreign key. It is a
// background write.
func (s *Store) DeleteOldMessages(ctx context.Context, before time.Time, limit int) (hookd.RetentionCount, error) {
	if _, err := s.DeleteOldEndpointHours(ctx, before); err != nil { // endpoint_hours.go
		return hookd.RetentionCount{}, err
	}
	var n hookd.RetentionCount
	err := s.InTx(hookd.BackgroundWrite(ctx), func(tx hookd.Tx) error {
		q := tx.(*txn).sqlTx
		rows, err := q.QueryContext(ctx, `SELECT m.id FROM hookd_messages m WHERE m.created_at < ? AND NOT EXISTS (
				SELECT 1 FROM hookd_deliveries d WHERE d.message_id = m.id AND d.status = 'pending')
			ORDER BY m.created_at LIMIT ?`, micros(before), limit)
		if err != nil {
			return classify(err)
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return classify(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return classify(err)
		}
		in := placeholders(len(ids))
		n.Messages = len(ids)
		if err := q.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM hookd_deliveries WHERE message_id IN (`+in+`)),
			(SELECT count(*) FROM hookd_attempts WHERE message_id IN (`+in+`))`, append(ids, ids...)...).
			Scan(&n.Deliveries, &n.Attempts); err != nil {
			return classify(err)
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM hookd_jobs WHERE delivery_id IN (
			SELECT id FROM hookd_deliveries WHERE message_id IN (`+in+`))`, ids...); err != nil {
			return classify(err)
		}
		_, err = q.ExecContext(ctx, `DELETE FROM hookd_messages WHERE id IN (`+in+`)`, ids...)
		return classify(err)
	})
	if err != nil {
		return hookd.RetentionCount{}, fmt.Errorf("delete old messages: %w", err)
	}
	return n, nil
}
