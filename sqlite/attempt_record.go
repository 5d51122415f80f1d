package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// RecordAttempts is the worker's hot path: a batch may carry a hundred records. Three statements a
// record cost about 73 µs of CPU a record here (each statement crosses database/sql and the driver,
// which watches the context with a goroutine per statement), so a batch is written set-wise: the
// attempts in multi-row INSERTs, then the deliveries and the endpoints with UPDATE ... FROM
// (VALUES ...), each row folded in Go beforehand to the state that applying the records one by
// one, in order, would leave. The multi-row statements are prepared once, at Open, for a few row
// counts (see batchStmt); preparing them per call cost a fifth of the time.

const attemptInsertPrefix = `INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number,
	trigger_kind, url, at, duration, status_code, success, error, response, request_headers, response_headers,
	event_type) SELECT v.*, ` + attemptEventTypeSQL + ` FROM (VALUES `

// attemptEventTypeSQL is the event type of the message of an attempt row v (its third value): an
// attempt carries it for the lists of an endpoint's attempts by event type (migration 17).
const attemptEventTypeSQL = `(SELECT m.event_type FROM hookd_messages m WHERE m.id = v.column3)`

const attemptRowParams = 16

func insertAttemptsSQL(rows int) string {
	return attemptInsertPrefix + valuesList(rows, attemptRowParams) + `) AS v`
}

const deliveryRowParams = 6

func updateDeliveriesSQL(rows int) string {
	return `UPDATE hookd_deliveries AS d SET status = v.column2, attempts = MAX(d.attempts, v.column3),
		next_attempt_at = v.column4, last_error = v.column5, updated_at = v.column6, first_job = 0
		FROM (VALUES ` + valuesList(rows, deliveryRowParams) + `) AS v WHERE d.id = v.column1`
}

const healthRowParams = 8

func updateHealthSQL(rows int) string {
	return `UPDATE hookd_endpoints AS e SET last_attempt_at = v.column2, last_status = v.column3,
		last_error = v.column4,
		last_success_at = CASE WHEN v.column5 THEN v.column6 ELSE e.last_success_at END,
		failing_since = CASE WHEN v.column5 THEN v.column8 ELSE COALESCE(e.failing_since, v.column8) END,
		consecutive_failures = CASE WHEN v.column5 THEN v.column7 ELSE e.consecutive_failures + v.column7 END
		FROM (VALUES ` + valuesList(rows, healthRowParams) + `) AS v WHERE e.id = v.column1`
}

// RecordAttempts writes each attempt, its delivery's new state (status, next attempt time, last
// error, UpdatedAt = the attempt's time; the count of attempts becomes the attempt's number unless
// it is already higher; the delivery's own first job ends, see Queue) and its endpoint's health,
// as if record by record in order. An endpoint deleted meanwhile is skipped; a missing delivery
// or message is hookd.ErrNotFound.
func (t *txn) RecordAttempts(ctx context.Context, recs []hookd.AttemptRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if err := t.insertAttempts(ctx, recs); err != nil {
		return err
	}
	if err := t.countAttempts(ctx, recs); err != nil { // endpoint_hours.go
		return err
	}
	deliveries, endpoints := sqlstore.FoldRecords(recs)
	if err := t.updateDeliveries(ctx, deliveries); err != nil {
		return err
	}
	return t.updateHealth(ctx, endpoints)
}

func (t *txn) insertAttempts(ctx context.Context, recs []hookd.AttemptRecord) error {
	args := make([]any, 0, attemptRowParams*len(recs))
	for i := range recs {
		a := &recs[i].Attempt
		reqH, respH := a.EncodeHeaders()
		args = append(args, a.ID, a.DeliveryID, a.MessageID, a.EndpointID, a.AppID, a.Number,
			string(a.Trigger), a.URL, micros(a.At), a.Duration.Microseconds(), a.StatusCode, a.Success,
			a.Error, a.Response, reqH, respH)
	}
	if _, err := t.execBatch(ctx, t.stmts.insertAttempts, attemptRowParams, args); err != nil {
		return fmt.Errorf("record attempts %s..%s: %w", recs[0].Attempt.ID, recs[len(recs)-1].Attempt.ID, classify(err))
	}
	return nil
}

func (t *txn) updateDeliveries(ctx context.Context, ds []sqlstore.DeliveryUpdate) error {
	args := make([]any, 0, deliveryRowParams*len(ds))
	for _, d := range ds {
		args = append(args, d.ID, string(d.Status), d.Attempts, nullMicros(d.Next), d.LastError, micros(d.At))
	}
	n, err := t.execBatch(ctx, t.stmts.updateDeliveries, deliveryRowParams, args)
	if err != nil {
		return fmt.Errorf("record attempts: update deliveries: %w", err)
	}
	if n != int64(len(ds)) {
		return fmt.Errorf("record attempts: update deliveries: %w", t.missingDelivery(ctx, ds))
	}
	return nil
}

// missingDelivery names a delivery of ds that does not exist.
func (t *txn) missingDelivery(ctx context.Context, ds []sqlstore.DeliveryUpdate) error {
	for _, d := range ds {
		var found bool
		err := t.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM hookd_deliveries WHERE id = ?)`, d.ID).Scan(&found)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("delivery %s: %w", d.ID, hookd.ErrNotFound)
		}
	}
	return fmt.Errorf("a delivery: %w", hookd.ErrNotFound)
}

func (t *txn) updateHealth(ctx context.Context, hs []sqlstore.HealthUpdate) error {
	args := make([]any, 0, healthRowParams*len(hs))
	for _, h := range hs {
		args = append(args, h.ID, micros(h.LastAt), h.LastStatus, h.LastError, h.Succeeded,
			nullMicros(h.LastSuccess), h.Failures, nullMicros(h.FirstFailure))
	}
	if _, err := t.execBatch(ctx, t.stmts.updateHealth, healthRowParams, args); err != nil {
		return fmt.Errorf("record attempts: update endpoint health: %w", err)
	}
	return nil
}

// valuesList returns rows groups of cols parameters: "(?, ?), (?, ?)".
func valuesList(rows, cols int) string {
	row := "(" + placeholders(cols) + ")"
	var b strings.Builder
	b.Grow(rows * (len(row) + 2))
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}
