package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

const deliveryCols = `d.id, d.message_id, d.endpoint_id, d.app_id, d.status, d.attempts, d.next_attempt_at,
	d.last_error, d.created_at, d.updated_at`

// LoadWork reads a delivery and its message in one statement.
func (q *queries) LoadWork(ctx context.Context, deliveryID string) (*hookd.Delivery, *hookd.Message, error) {
	var (
		d   hookd.Delivery
		msg hookd.Message
	)
	dest, finishDelivery := dialect.DeliveryDest(&d)
	msgDest, finishMessage := dialect.MessageDest(&msg)
	err := q.c.queryRow(ctx, `SELECT `+deliveryCols+`, `+messageCols+`
		FROM hookd_deliveries d JOIN hookd_messages m ON m.id = d.message_id WHERE d.id = $1`, deliveryID).
		Scan(append(dest, msgDest...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("load work for delivery %s: %w", deliveryID, classify(err))
	}
	finishDelivery()
	if err := finishMessage(); err != nil {
		return nil, nil, fmt.Errorf("load work for delivery %s: %w", deliveryID, err)
	}
	return &d, &msg, nil
}

// loadWorkBatchSQL reads deliveries and their messages. Each id is looked up on its own, by a
// LATERAL subquery that LIMIT 1 keeps from being flattened into a join, so that the plan is an
// index lookup per id whatever the planner believes of the tables' sizes. (Joined on
// d.id = ANY(...), the plan cached while the tables were almost empty, with no statistics,
// hashed a sequential scan of every message for each batch, and kept doing so as the table grew:
// measured on B1, about 1,200 scans of the whole table in a run.)
// TestHotStatementsNeverScanWholeTables checks the plan.
const loadWorkBatchSQL = `SELECT ` + deliveryCols + `, ` + messageCols + `
	FROM unnest($1::text[]) AS v (id)
	CROSS JOIN LATERAL (SELECT * FROM hookd_deliveries WHERE id = v.id LIMIT 1) AS d
	CROSS JOIN LATERAL (SELECT * FROM hookd_messages WHERE id = d.message_id LIMIT 1) AS m`

// LoadWorkBatch reads deliveries and their messages in one statement (hookd.WorkBatchLoader).
func (q *queries) LoadWorkBatch(ctx context.Context, deliveryIDs []string) (map[string]hookd.Work, error) {
	rows, err := q.c.query(ctx, loadWorkBatchSQL, deliveryIDs)
	if err != nil {
		return nil, fmt.Errorf("load work for %d deliveries: %w", len(deliveryIDs), classify(err))
	}
	defer rows.Close()
	out := make(map[string]hookd.Work, len(deliveryIDs))
	for rows.Next() {
		var (
			d   hookd.Delivery
			msg hookd.Message
		)
		dest, finishDelivery := dialect.DeliveryDest(&d)
		msgDest, finishMessage := dialect.MessageDest(&msg)
		if err := rows.Scan(append(dest, msgDest...)...); err != nil {
			return nil, fmt.Errorf("load work: %w", err)
		}
		finishDelivery()
		if err := finishMessage(); err != nil {
			return nil, fmt.Errorf("load work for delivery %s: %w", d.ID, err)
		}
		out[d.ID] = hookd.Work{Delivery: &d, Message: &msg}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load work: %w", classify(err))
	}
	return out, nil
}

// InsertDeliveries writes new deliveries in one statement. A missing message is
// hookd.ErrNotFound; a second delivery of a message to one endpoint, hookd.ErrConflict.
func (t *txn) InsertDeliveries(ctx context.Context, ds []hookd.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	var (
		ids, messageIDs, endpointIDs, appIDs = make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds))
		statuses, lastErrors                 = make([]string, len(ds)), make([]string, len(ds))
		attempts                             = make([]int, len(ds))
		nexts                                = make([]*time.Time, len(ds))
		createdAts, updatedAts               = make([]time.Time, len(ds)), make([]time.Time, len(ds))
	)
	for i := range ds {
		d := &ds[i]
		ids[i], messageIDs[i], endpointIDs[i], appIDs[i] = d.ID, d.MessageID, d.EndpointID, d.AppID
		statuses[i], attempts[i], nexts[i], lastErrors[i] = string(d.Status), d.Attempts, d.NextAttemptAt, d.LastError
		createdAts[i], updatedAts[i] = d.CreatedAt, d.UpdatedAt
	}
	_, err := t.c.exec(ctx, `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, attempts,
		next_attempt_at, last_error, created_at, updated_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
			$7::timestamptz[], $8::text[], $9::timestamptz[], $10::timestamptz[])`,
		ids, messageIDs, endpointIDs, appIDs, statuses, attempts, nexts, lastErrors, createdAts, updatedAts)
	if err != nil {
		return fmt.Errorf("insert deliveries %s..%s: %w", ds[0].ID, ds[len(ds)-1].ID, classify(err))
	}
	return nil
}

// ParkDelivery clears a pending delivery's next attempt time while its endpoint is ordered and an
// earlier delivery to it is pending; a parked delivery has no job, so it is no longer its own
// first job either (Queue). It holds a share lock on the endpoint row until the
// transaction ends, and reads after taking it: an update of the endpoint (Ordered turned off) and
// LockFirstPending, which lock the row too, either end first and are read here, or wait and then
// find the delivery parked.
func (t *txn) ParkDelivery(ctx context.Context, id, endpointID string, at time.Time) (bool, error) {
	var ordered bool
	err := classify(t.c.queryRow(ctx, `SELECT ordered FROM hookd_endpoints WHERE id = $1 FOR SHARE`, endpointID).Scan(&ordered))
	if errors.Is(err, hookd.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("park delivery %s: %w", id, err)
	}
	if !ordered {
		return false, nil
	}
	n, err := t.c.exec(ctx, `UPDATE hookd_deliveries SET next_attempt_at = NULL, updated_at = $1, first_job = false
		WHERE id = $2 AND status = 'pending' AND EXISTS (SELECT 1 FROM hookd_deliveries e
			WHERE e.endpoint_id = $3 AND e.status = 'pending' AND e.id < $2)`, at, id, endpointID)
	if err != nil {
		return false, fmt.Errorf("park delivery %s: %w", id, classify(err))
	}
	return n > 0, nil
}

// LockFirstPending takes the endpoint row's lock (FOR NO KEY UPDATE, which a ParkDelivery's share
// lock waits for and which waits for it), then reads the first pending delivery.
func (t *txn) LockFirstPending(ctx context.Context, endpointID string) (*hookd.Delivery, error) {
	var one int
	err := classify(t.c.queryRow(ctx, `SELECT 1 FROM hookd_endpoints WHERE id = $1 FOR NO KEY UPDATE`, endpointID).Scan(&one))
	if err != nil && !errors.Is(err, hookd.ErrNotFound) { // a deleted endpoint's deliveries still advance
		return nil, fmt.Errorf("lock endpoint %s: %w", endpointID, err)
	}
	return t.FirstPendingDelivery(ctx, endpointID)
}

// SetDeliveryStatus writes the delivery's status, next attempt time and last error, with
// UpdatedAt = at; its count of attempts stays. The delivery stops being its own first job (Queue):
// its callers end it, or queue its next attempt in hookd_jobs.
func (t *txn) SetDeliveryStatus(ctx context.Context, id string, status hookd.DeliveryStatus, nextAttemptAt *time.Time, lastError string, at time.Time) error {
	err := mustAffect(t.c.exec(ctx, `UPDATE hookd_deliveries SET status = $1, next_attempt_at = $2,
		last_error = $3, updated_at = $4, first_job = false WHERE id = $5`,
		string(status), nullTime(nextAttemptAt), lastError, at, id))
	if err != nil {
		return fmt.Errorf("set delivery %s status %s: %w", id, status, err)
	}
	return nil
}
