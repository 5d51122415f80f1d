package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
)

// The store is the outbox of package bus: the table hookd_events in the store's file.
var _ bus.Outbox = (*Store)(nil)

const eventCols = `id, name, aggregate_id, payload, occurred_at, status, attempts, next_attempt_at, last_error, created_at, updated_at`

// InsertEvents writes events in tx: a *sql.Tx on DB(), or a hookd.Tx of the store.
func (s *Store) InsertEvents(ctx context.Context, tx any, events []bus.Record) error {
	var sqlTx *sql.Tx
	switch t := tx.(type) {
	case *sql.Tx:
		sqlTx = t
	case *txn:
		if t != nil {
			sqlTx = t.sqlTx
		}
	}
	if sqlTx == nil {
		return fmt.Errorf("insert events: transaction is %T, want a *sql.Tx on the store's DB() or one of its hookd.Tx: %w", tx, hookd.ErrUnsupportedTx)
	}
	const chunk = 1000 // 8,000 parameters a statement, within SQLite's 32,766
	for len(events) > 0 {
		n := min(len(events), chunk)
		args := make([]any, 0, 8*n)
		for _, e := range events[:n] {
			args = append(args, e.ID, e.Name, e.AggregateID, e.Payload, micros(e.OccurredAt), micros(e.NextAttempt), micros(e.CreatedAt), micros(e.UpdatedAt))
		}
		q := `INSERT INTO hookd_events (id, name, aggregate_id, payload, occurred_at, next_attempt_at, created_at, updated_at) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ")
		if _, err := sqlTx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("insert %d events: %w", n, classify(err))
		}
		events = events[n:]
	}
	return nil
}

// DueEvents returns up to limit pending events due at or before now, the earliest first.
func (s *Store) DueEvents(ctx context.Context, now time.Time, limit int) ([]bus.Record, error) {
	out, err := collect(ctx, s.rdb, `SELECT `+eventCols+` FROM hookd_events
		WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`, []any{micros(now), limit}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("due events: %w", err)
	}
	return out, nil
}

// EventsByID returns the committed events of ids.
func (s *Store) EventsByID(ctx context.Context, ids []string) ([]bus.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := collect(ctx, s.rdb, `SELECT `+eventCols+` FROM hookd_events
		WHERE id IN (SELECT value FROM json_each(?))`, []any{jsonList(ids)}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("events by id: %w", err)
	}
	return out, nil
}

// ClaimEvent takes the next attempt of a pending event still at attempts.
func (s *Store) ClaimEvent(ctx context.Context, id string, attempts int, leaseUntil, at time.Time) (bool, error) {
	var n int64
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		res, err := tx.(*txn).sqlTx.ExecContext(ctx, `UPDATE hookd_events SET attempts = attempts + 1,
			next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'pending' AND attempts = ?`,
			micros(leaseUntil), micros(at), id, attempts)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim event %s: %w", id, classify(err))
	}
	return n == 1, nil
}

// SettleEvent writes the outcome of a claimed attempt.
func (s *Store) SettleEvent(ctx context.Context, st bus.Settlement) error {
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		t := tx.(*txn).sqlTx
		if st.Done {
			_, err := t.ExecContext(ctx, `DELETE FROM hookd_events WHERE id = ? AND attempts = ?`, st.ID, st.Attempts)
			return err
		}
		_, err := t.ExecContext(ctx, `UPDATE hookd_events SET status = ?, next_attempt_at = ?, last_error = ?,
			updated_at = ? WHERE id = ? AND attempts = ?`,
			string(st.Status), micros(st.NextAttempt), st.LastError, micros(st.At), st.ID, st.Attempts)
		return err
	})
	if err != nil {
		return fmt.Errorf("settle event %s: %w", st.ID, classify(err))
	}
	return nil
}

// ListEvents lists the events in status in id order.
func (s *Store) ListEvents(ctx context.Context, status bus.Status, after string, limit int) ([]bus.Record, error) {
	out, err := collect(ctx, s.rdb, `SELECT `+eventCols+` FROM hookd_events WHERE status = ? AND id > ?
		ORDER BY id LIMIT ?`, []any{string(status), after, limit}, dialect.ScanOutboxRecord)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// RedriveEvent makes a failed event pending again, due at now, its attempts counted from zero.
func (s *Store) RedriveEvent(ctx context.Context, id string, now time.Time) error {
	err := s.InTx(ctx, func(tx hookd.Tx) error {
		return mustAffect(tx.(*txn).sqlTx.ExecContext(ctx, `UPDATE hookd_events SET status = 'pending', attempts = 0,
			next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'failed'`, micros(now), micros(now), id))
	})
	if err != nil {
		return fmt.Errorf("redrive event %s: %w", id, err)
	}
	return nil
}
