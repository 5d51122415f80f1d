package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
)

// The store is the outbox of package bus: the table hookd_events in the store's database.
var _ bus.Outbox = (*Store)(nil)

const eventCols = `id, name, aggregate_id, payload, occurred_at, status, attempts, next_attempt_at, last_error, created_at, updated_at`

// InsertEvents writes events in tx: a pgx.Tx, a *sql.Tx of pgx's database/sql driver, or a
// hookd.Tx of the store.
func (s *Store) InsertEvents(ctx context.Context, tx any, events []bus.Record) error {
	var c conn
	if t, ok := tx.(hookd.Tx); ok {
		c = txConn(t)
	} else if w, err := s.WrapTx(tx); err == nil {
		c = w.(*txn).c
	}
	if c == nil {
		return fmt.Errorf("insert events: transaction is %T, want a pgx.Tx, a *sql.Tx or one of the store's hookd.Tx: %w", tx, hookd.ErrUnsupportedTx)
	}
	if len(events) == 0 {
		return nil
	}
	n := len(events)
	var (
		ids, names, aggregates = make([]string, n), make([]string, n), make([]string, n)
		payloads               = make([][]byte, n)
		occurred, next         = make([]time.Time, n), make([]time.Time, n)
		created, updated       = make([]time.Time, n), make([]time.Time, n)
	)
	for i, e := range events {
		ids[i], names[i], aggregates[i], payloads[i] = e.ID, e.Name, e.AggregateID, e.Payload
		occurred[i], next[i], created[i], updated[i] = e.OccurredAt, e.NextAttempt, e.CreatedAt, e.UpdatedAt
	}
	_, err := c.exec(ctx, `INSERT INTO hookd_events (id, name, aggregate_id, payload, occurred_at, next_attempt_at, created_at, updated_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[], $6::timestamptz[],
			$7::timestamptz[], $8::timestamptz[])`, ids, names, aggregates, payloads, occurred, next, created, updated)
	if err != nil {
		return fmt.Errorf("insert %d events: %w", n, classify(err))
	}
	return nil
}

// DueEvents returns up to limit pending events due at or before now, the earliest first.
func (s *Store) DueEvents(ctx context.Context, now time.Time, limit int) ([]bus.Record, error) {
	out, err := collect(ctx, s.c, `SELECT `+eventCols+` FROM hookd_events
		WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2`, []any{now, limit}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("due events: %w", classify(err))
	}
	return out, nil
}

// EventsByID returns the committed events of ids.
func (s *Store) EventsByID(ctx context.Context, ids []string) ([]bus.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := collect(ctx, s.c, `SELECT `+eventCols+` FROM hookd_events WHERE id = ANY($1::text[])`, []any{ids}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("events by id: %w", classify(err))
	}
	return out, nil
}

// ClaimEvent takes the next attempt of a pending event still at attempts.
func (s *Store) ClaimEvent(ctx context.Context, id string, attempts int, leaseUntil, at time.Time) (bool, error) {
	n, err := s.c.exec(ctx, `UPDATE hookd_events SET attempts = attempts + 1, next_attempt_at = $1, updated_at = $2
		WHERE id = $3 AND status = 'pending' AND attempts = $4`, leaseUntil, at, id, attempts)
	if err != nil {
		return false, fmt.Errorf("claim event %s: %w", id, classify(err))
	}
	return n == 1, nil
}

// SettleEvent writes the outcome of a claimed attempt.
func (s *Store) SettleEvent(ctx context.Context, st bus.Settlement) error {
	var err error
	if st.Done {
		_, err = s.c.exec(ctx, `DELETE FROM hookd_events WHERE id = $1 AND attempts = $2`, st.ID, st.Attempts)
	} else {
		_, err = s.c.exec(ctx, `UPDATE hookd_events SET status = $1, next_attempt_at = $2, last_error = $3, updated_at = $4
			WHERE id = $5 AND attempts = $6`, string(st.Status), st.NextAttempt, st.LastError, st.At, st.ID, st.Attempts)
	}
	if err != nil {
		return fmt.Errorf("settle event %s: %w", st.ID, classify(err))
	}
	return nil
}

// ListEvents lists the events in status in id order.
func (s *Store) ListEvents(ctx context.Context, status bus.Status, after string, limit int) ([]bus.Record, error) {
	out, err := collect(ctx, s.c, `SELECT `+eventCols+` FROM hookd_events WHERE status = $1 AND id > $2
		ORDER BY id LIMIT $3`, []any{string(status), after, limit}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", classify(err))
	}
	return out, nil
}

// RedriveEvent makes a failed event pending again, due at now, its attempts counted from zero.
func (s *Store) RedriveEvent(ctx context.Context, id string, now time.Time) error {
	err := mustAffect(s.c.exec(ctx, `UPDATE hookd_events SET status = 'pending', attempts = 0, next_attempt_at = $1,
		updated_at = $1 WHERE id = $2 AND status = 'failed'`, now, id))
	if err != nil {
		return fmt.Errorf("redrive event %s: %w", id, err)
	}
	return nil
}
