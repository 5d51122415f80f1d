package postgres

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// RecordAttempts is the worker's hot path: a batch may carry a couple of hundred records. It is
// one statement, one round trip: the attempts inserted from arrays (unnest), and the deliveries
// and the endpoints updated from arrays in data-modifying WITH clauses, each row folded in Go
// beforehand to the state that applying the records one by one, in order, would leave. The
// three touch different tables, so the order in which PostgreSQL runs them does not matter.
// A scheduled attempt's record ends its delivery's own first job (first_job; see Queue) in the
// same update; a manual one leaves it, since the scheduled attempt is still to be made.
// Deliveries and endpoints are updated in id order, so that two processes recording at once
// lock shared rows in one order.
//
// Each updated row is matched to its array element by id = ANY (ARRAY[v.id]), not id = v.id:
// with no equality to hash or merge on, the plan is a loop over the arrays with an index lookup
// each, whatever the planner believes of the tables' sizes. (With id = v.id, the plan cached
// while the tables were almost empty, with no statistics, hashed a sequential scan of the whole
// table, and kept doing so as the table grew.) TestHotStatementsNeverScanWholeTables checks the
// plan.
//
// An attempt row carries its message's event type, read through the message's primary key, for
// the lists of an endpoint's attempts by event type (migration 17).
const recordAttemptsSQL = `WITH
attempts AS (
	INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind,
		url, at, duration_us, status_code, success, error, response, request_headers, response_headers,
		event_type)
	SELECT v.*, (SELECT m.event_type FROM hookd_messages m WHERE m.id = v.message_id)
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
		$7::text[], $8::text[], $9::timestamptz[], $10::bigint[], $11::integer[], $12::boolean[],
		$13::text[], $14::bytea[], $29::text[], $30::text[]) AS v (id, delivery_id, message_id)
),
deliveries AS (
	UPDATE hookd_deliveries AS d SET status = v.status, attempts = GREATEST(d.attempts, v.attempts),
		next_attempt_at = v.next_attempt_at, last_error = v.last_error, updated_at = v.at,
		first_job = d.first_job AND NOT v.scheduled
	FROM unnest($15::text[], $16::text[], $17::integer[], $18::timestamptz[], $19::text[],
		$20::timestamptz[], $31::boolean[]) AS v (id, status, attempts, next_attempt_at, last_error, at, scheduled)
	WHERE d.id = ANY (ARRAY[v.id])
	RETURNING 1
),
health AS (
	UPDATE hookd_endpoints AS e SET last_attempt_at = v.last_at, last_status = v.last_status,
		last_error = v.last_error,
		last_success_at = CASE WHEN v.succeeded THEN v.last_success ELSE e.last_success_at END,
		failing_since = CASE WHEN v.succeeded THEN v.first_failure ELSE COALESCE(e.failing_since, v.first_failure) END,
		consecutive_failures = CASE WHEN v.succeeded THEN v.failures ELSE e.consecutive_failures + v.failures END
	FROM unnest($21::text[], $22::timestamptz[], $23::integer[], $24::text[], $25::boolean[],
		$26::timestamptz[], $27::integer[], $28::timestamptz[])
		AS v (id, last_at, last_status, last_error, succeeded, last_success, failures, first_failure)
	WHERE e.id = ANY (ARRAY[v.id])
)
SELECT count(*) FROM deliveries`

// RecordAttempts writes each attempt, its delivery's new state (status, next attempt time, last
// error, UpdatedAt = the attempt's time; the count of attempts becomes the attempt's number unless
// it is already higher) and its endpoint's health, as if record by record in order. An endpoint
// deleted meanwhile is skipped; a missing delivery or message is hookd.ErrNotFound.
func (t *txn) RecordAttempts(ctx context.Context, recs []hookd.AttemptRecord) error {
	if len(recs) == 0 {
		return nil
	}
	deliveries, endpoints := sqlstore.FoldRecords(recs)
	args := make([]any, 0, 31)
	args = appendAttemptArrays(args, recs)
	args = appendDeliveryArrays(args, deliveries)
	args = appendHealthArrays(args, endpoints)
	args = appendAttemptHeaderArrays(args, recs) // $29 and $30, after the columns they joined
	args = append(args, scheduledRecords(recs, deliveries))

	var updated int
	if err := t.c.queryRow(ctx, recordAttemptsSQL, args...).Scan(&updated); err != nil {
		return fmt.Errorf("record attempts %s..%s: %w", recs[0].Attempt.ID, recs[len(recs)-1].Attempt.ID, classify(err))
	}
	if updated != len(deliveries) {
		return fmt.Errorf("record attempts: update deliveries: %w", t.missingDelivery(ctx, deliveries))
	}
	return t.countAttempts(ctx, recs) // endpoint_hours.go
}

// missingDelivery names a delivery of ds that does not exist.
func (t *txn) missingDelivery(ctx context.Context, ds []sqlstore.DeliveryUpdate) error {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	var id string
	err := t.c.queryRow(ctx, `SELECT v.id FROM unnest($1::text[]) AS v (id)
		WHERE NOT EXISTS (SELECT 1 FROM hookd_deliveries d WHERE d.id = v.id) LIMIT 1`, ids).Scan(&id)
	switch {
	case err == nil:
		return fmt.Errorf("delivery %s: %w", id, hookd.ErrNotFound)
	case classify(err) == hookd.ErrNotFound:
		return fmt.Errorf("a delivery: %w", hookd.ErrNotFound)
	}
	return err
}

// scheduledRecords says, for each of ds, whether recs hold a scheduled attempt of it ($31).
func scheduledRecords(recs []hookd.AttemptRecord, ds []sqlstore.DeliveryUpdate) []bool {
	scheduled := make(map[string]bool, len(ds))
	for i := range recs {
		if a := &recs[i].Attempt; a.Trigger != hookd.TriggerManual {
			scheduled[a.DeliveryID] = true
		}
	}
	out := make([]bool, len(ds))
	for i, d := range ds {
		out[i] = scheduled[d.ID]
	}
	return out
}

func appendAttemptArrays(args []any, recs []hookd.AttemptRecord) []any {
	n := len(recs)
	var (
		ids, deliveryIDs, messageIDs = make(textArray, n), make(textArray, n), make(textArray, n)
		endpointIDs, appIDs          = make(textArray, n), make(textArray, n)
		numbers, statusCodes         = make([]int, n), make([]int, n)
		triggers, urls               = make(textArray, n), make(textArray, n)
		ats                          = make(timeArray, n)
		durations                    = make([]int64, n)
		successes                    = make([]bool, n)
		errs                         = make(textArray, n)
		responses                    = make([][]byte, n)
	)
	for i := range recs {
		a := &recs[i].Attempt
		ids[i], deliveryIDs[i], messageIDs[i], endpointIDs[i], appIDs[i] = a.ID, a.DeliveryID, a.MessageID, a.EndpointID, a.AppID
		numbers[i], triggers[i], urls[i], ats[i] = a.Number, string(a.Trigger), a.URL, a.At
		durations[i], statusCodes[i], successes[i] = a.Duration.Microseconds(), a.StatusCode, a.Success
		errs[i], responses[i] = a.Error, append([]byte{}, a.Response...)
	}
	return append(args, ids, deliveryIDs, messageIDs, endpointIDs, appIDs, numbers, triggers, urls, ats,
		durations, statusCodes, successes, errs, responses)
}

func appendAttemptHeaderArrays(args []any, recs []hookd.AttemptRecord) []any {
	reqs, resps := make(textArray, len(recs)), make(textArray, len(recs))
	for i := range recs {
		reqs[i], resps[i] = recs[i].Attempt.EncodeHeaders()
	}
	return append(args, reqs, resps)
}

func appendDeliveryArrays(args []any, ds []sqlstore.DeliveryUpdate) []any {
	n := len(ds)
	var (
		ids, statuses, lastErrors = make(textArray, n), make(textArray, n), make(textArray, n)
		attempts                  = make([]int, n)
		nexts                     = make(nullTimeArray, n)
		ats                       = make(timeArray, n)
	)
	for i, d := range ds {
		ids[i], statuses[i], attempts[i], nexts[i], lastErrors[i], ats[i] = d.ID, string(d.Status), d.Attempts, optTime{d.Next}, d.LastError, d.At
	}
	return append(args, ids, statuses, attempts, nexts, lastErrors, ats)
}

func appendHealthArrays(args []any, hs []sqlstore.HealthUpdate) []any {
	n := len(hs)
	var (
		ids, lastErrors              = make(textArray, n), make(textArray, n)
		lastAts                      = make(timeArray, n)
		lastStatuses, failures       = make([]int, n), make([]int, n)
		succeeded                    = make([]bool, n)
		lastSuccesses, firstFailures = make(nullTimeArray, n), make(nullTimeArray, n)
	)
	for i, h := range hs {
		ids[i], lastAts[i], lastStatuses[i], lastErrors[i] = h.ID, h.LastAt, h.LastStatus, h.LastError
		succeeded[i], lastSuccesses[i], failures[i], firstFailures[i] = h.Succeeded, optTime{h.LastSuccess}, h.Failures, optTime{h.FirstFailure}
	}
	return append(args, ids, lastAts, lastStatuses, lastErrors, succeeded, lastSuccesses, failures, firstFailures)
}
