package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

const deliveryCols = `d.id, d.message_id, d.endpoint_id, d.app_id, d.status, d.attempts, d.next_attempt_at,
	d.last_error, d.created_at, d.updated_at`

const deliveryInsertParams = 10

func insertDeliveriesSQL(rows int) string {
	return `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts,
		next_attempt_at, last_error, created_at, updated_at) VALUES ` + valuesList(rows, deliveryInsertParams)
}

// loadWorkSQL reads a delivery and its message in one statement, for the worker.
const loadWorkSQL = `SELECT ` + deliveryCols + `, ` + messageCols + `
	FROM hookd_deliveries d JOIN hookd_messages m ON m.id = d.message_id WHERE d.id = ?`

// GetDelivery finds a delivery by id.
func (q *queries) GetDelivery(ctx context.Context, id string) (*hookd.Delivery, error) {
	row := q.q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM hookd_deliveries d WHERE d.id = ?`, id)
	d, err := dialect.ScanDelivery(row)
	if err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", id, classify(err))
	}
	return &d, nil
}

// DueDeliveries returns pending deliveries due at or before before, after afterID, in id order.
func (q *queries) DueDeliveries(ctx context.Context, before time.Time, afterID string, limit int) ([]hookd.Delivery, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+deliveryCols+` FROM hookd_deliveries d
		WHERE d.status = 'pending' AND d.id > ? AND COALESCE(d.next_attempt_at, d.created_at) <= ?
		ORDER BY d.id LIMIT ?`, afterID, micros(before), limit)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", classify(err))
	}
	defer rows.Close()
	var out []hookd.Delivery
	for rows.Next() {
		d, err := dialect.ScanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("due deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("due deliveries: %w", classify(err))
	}
	return out, nil
}

// GetDeliveryFor finds the delivery of a message to an endpoint.
func (q *queries) GetDeliveryFor(ctx context.Context, messageID, endpointID string) (*hookd.Delivery, error) {
	row := q.q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM hookd_deliveries d
		WHERE d.message_id = ? AND d.endpoint_id = ?`, messageID, endpointID)
	d, err := dialect.ScanDelivery(row)
	if err != nil {
		return nil, fmt.Errorf("get delivery of message %s to endpoint %s: %w", messageID, endpointID, classify(err))
	}
	return &d, nil
}

// ListDeliveries lists deliveries oldest first.
func (q *queries) ListDeliveries(ctx context.Context, f hookd.DeliveryFilter) (*hookd.Page[hookd.Delivery], error) {
	return dialect.ListDeliveries(ctx, q.reader(), deliveryCols, f)
}

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

// InsertDeliveries writes new deliveries. A missing message is hookd.ErrNotFound; a second delivery
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

// SetDeliveryStatus writes the delivery's status, next attempt time and last error, with
// UpdatedAt = at; its count of attempts stays.
func (t *txn) SetDeliveryStatus(ctx context.Context, id string, status hookd.DeliveryStatus, nextAttemptAt *time.Time, lastError string, at time.Time) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_deliveries SET status = ?, next_attempt_at = ?,
		last_error = ?, updated_at = ? WHERE id = ?`,
		string(status), nullMicros(nextAttemptAt), lastError, micros(at), id))
	if err != nil {
		return fmt.Errorf("set delivery %s status %s: %w", id, status, err)
	}
	return nil
}

// DeliveryCountsByMessage counts the deliveries of ids by status in one statement
// (hookd.DeliveryCounter).
func (q *queries) DeliveryCountsByMessage(ctx context.Context, appID string, ids []string) (map[string]hookd.DeliveryCounts, error) {
	out := make(map[string]hookd.DeliveryCounts)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.q.QueryContext(ctx, `SELECT d.message_id, d.status, count(*) FROM hookd_deliveries d
		WHERE d.app_id = ? AND d.message_id IN (SELECT value FROM json_each(?)) GROUP BY d.message_id, d.status`,
		appID, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("count deliveries of %d messages of application %s: %w", len(ids), appID, classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id, status string
		var n int
		if err := rows.Scan(&id, &status, &n); err != nil {
			return nil, fmt.Errorf("count deliveries of %d messages of application %s: %w", len(ids), appID, unavailable(err))
		}
		c := out[id]
		c.Add(hookd.DeliveryStatus(status), n)
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count deliveries of %d messages of application %s: %w", len(ids), appID, unavailable(err))
	}
	return out, nil
}
