package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookd/hookd"
)

const deliveryCols = `d.id, d.message_id, d.endpoint_id, d.app_id, d.status, d.attempts, d.next_attempt_at,
	d.last_error, d.created_at, d.updated_at`

const deliveryInsertParams = 10

func insertDeliveriesSQL(rows int) string {
	row := "(" + placeholders(deliveryInsertParams) + ", 1)"
	return `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts,
		next_attempt_at, last_error, created_at, updated_at, first_job) VALUES ` +
		strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// loadWorkSQL reads a delivery and its message in one statement, for the worker.
const loadWorkSQL = `SELECT ` + deliveryCols + `, ` + messageCols + `
	FROM hookd_deliveries d JOIN hookd_messages m ON m.id = d.message_id WHERE d.id = ?`

// LoadWork reads a delivery and its message in one statement.
func (q *queries) LoadWork(ctx context.Context, deliveryID string) (*hookd.Delivery, *hookd.Message, error) {
	var (
		d   hookd.Delivery
		msg hookd.Message
	)
	dest, finish := dialect.DeliveryDest(&d)
	msgDest, finishMessage := dialect.MessageDest(&msg)
	err := q.stmt(ctx, q.stmts.loadWork).QueryRowContext(ctx, deliveryID).Scan(append(dest, msgDest...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("load work for delivery %s: %w", deliveryID, classify(err))
	}
	finish()
	if err := finishMessage(); err != nil {
		return nil, nil, fmt.Errorf("load work for delivery %s: %w", deliveryID, err)
	}
	return &d, &msg, nil
}

// InsertDeliveries writes new deliveries, each its own first job (first_job; see Queue). A missing message is hookd.ErrNotFound; a second delivery
// of a message to one endpoint, hookd.ErrConflict.
func (t *txn) InsertDeliveries(ctx context.Context, ds []hookd.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	args := make([]any, 0, deliveryInsertParams*len(ds))
	for i := range ds {
		d := &ds[i]
		args = append(args, d.ID, d.MessageID, d.EndpointID, d.AppID, string(d.Status), d.Attempts,
			nullMicros(d.NextAttemptAt), d.LastError, micros(d.CreatedAt), micros(d.UpdatedAt))
	}
	if _, err := t.execBatch(ctx, t.stmts.insertDeliveries, deliveryInsertParams, args); err != nil {
		return fmt.Errorf("insert deliveries %s..%s: %w", ds[0].ID, ds[len(ds)-1].ID, classify(err))
	}
	return nil
}

// ParkDelivery clears a pending delivery's next attempt time (and its own first job) while its endpoint is ordered and an
// earlier delivery to it is pending. One writer at a time holds the file (transactions begin
// immediate), so what it reads stays true until it commits.
func (t *txn) ParkDelivery(ctx context.Context, id, endpointID string, at time.Time) (bool, error) {
	var ordered, behind bool
	err := t.q.QueryRowContext(ctx, `SELECT e.ordered, EXISTS (SELECT 1 FROM hookd_deliveries d
		WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.id < ?) FROM hookd_endpoints e WHERE e.id = ?`,
		id, endpointID).Scan(&ordered, &behind)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("park delivery %s: %w", id, classify(err))
	}
	if !ordered || !behind {
		return false, nil
	}
	res, err := t.q.ExecContext(ctx, `UPDATE hookd_deliveries SET next_attempt_at = NULL, first_job = 0, updated_at = ?
		WHERE id = ? AND status = 'pending'`, micros(at), id)
	if err != nil {
		return false, fmt.Errorf("park delivery %s: %w", id, classify(err))
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// LockFirstPending reads the endpoint's first pending delivery: the transaction holds the one
// write lock already.
func (t *txn) LockFirstPending(ctx context.Context, endpointID string) (*hookd.Delivery, error) {
	return t.FirstPendingDelivery(ctx, endpointID)
}

// SetDeliveryStatus writes the delivery's status, next attempt time and last error, with
// UpdatedAt = at; its count of attempts stays. It ends the delivery's own first job: a delivery
// made pending again (an ordered endpoint's advance or unpark) has its attempt queued as a row of
// hookd_jobs.
func (t *txn) SetDeliveryStatus(ctx context.Context, id string, status hookd.DeliveryStatus, nextAttemptAt *time.Time, lastError string, at time.Time) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_deliveries SET status = ?, next_attempt_at = ?,
		last_error = ?, updated_at = ?, first_job = 0 WHERE id = ?`,
		string(status), nullMicros(nextAttemptAt), lastError, micros(at), id))
	if err != nil {
		return fmt.Errorf("set delivery %s status %s: %w", id, status, err)
	}
	return nil
}
