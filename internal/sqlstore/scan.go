package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// The scanners below read the columns each store lists in its *Cols constant, in that order.
// Lists and maps arrive as JSON text (sqlcodec), times through the dialect's destinations.

// ScanApplication reads an application: id, uid, name, throttle_rate, metadata, created_at,
// updated_at, retry_schedule, timeout_ms.
func (d *Dialect) ScanApplication(r Scanner) (hookd.Application, error) {
	var (
		app                     hookd.Application
		uid, metadata, schedule sql.NullString
		timeout                 sql.NullInt64
	)
	if err := r.Scan(&app.ID, &uid, &app.Name, &app.ThrottleRate, &metadata,
		d.ScanTime(&app.CreatedAt), d.ScanTime(&app.UpdatedAt), &schedule, &timeout); err != nil {
		return app, err
	}
	app.UID = uid.String
	var err error
	if app.RetrySchedule, err = sqlcodec.DecodeSchedule(schedule); err != nil {
		return app, err
	}
	app.AttemptTimeout = sqlcodec.DecodeTimeout(timeout)
	md, err := sqlcodec.DecodeMap(metadata)
	if err != nil {
		return app, err
	}
	app.Metadata = md
	return app, nil
}

// ScanEndpoint reads an endpoint: id, app_id, uid, url, description, version, event_types,
// channels, disabled, disabled_reason, disabled_at, rate_limit, max_in_flight, headers, scheme,
// metadata, created_at, updated_at, last_attempt_at, last_status, last_error, last_success_at,
// failing_since, consecutive_failures, retry_schedule, timeout_ms, ordered.
func (d *Dialect) ScanEndpoint(r Scanner) (hookd.Endpoint, error) {
	var (
		ep                                                     hookd.Endpoint
		uid, eventTypes, channels, headers, metadata, schedule sql.NullString
		scheme                                                 string
		timeout                                                sql.NullInt64
	)
	err := r.Scan(&ep.ID, &ep.AppID, &uid, &ep.URL, &ep.Description, &ep.Version, &eventTypes, &channels,
		&ep.Disabled, &ep.DisabledReason, d.ScanNullTime(&ep.DisabledAt), &ep.RateLimit, &ep.MaxInFlight,
		&headers, &scheme, &metadata, d.ScanTime(&ep.CreatedAt), d.ScanTime(&ep.UpdatedAt),
		d.ScanNullTime(&ep.LastAttemptAt), &ep.LastStatus, &ep.LastError, d.ScanNullTime(&ep.LastSuccessAt),
		d.ScanNullTime(&ep.FailingSince), &ep.ConsecutiveFailures, &schedule, &timeout, &ep.Ordered)
	if err != nil {
		return ep, err
	}
	ep.UID = uid.String
	if ep.RetrySchedule, err = sqlcodec.DecodeSchedule(schedule); err != nil {
		return ep, err
	}
	ep.AttemptTimeout = sqlcodec.DecodeTimeout(timeout)
	ep.Scheme = hookd.SignatureScheme(scheme)
	return ep, sqlcodec.DecodeEndpointConfig(&ep, eventTypes, channels, headers, metadata)
}

// ScanEventType reads an event type: name, description, schemas, feature_flags, group_name,
// deprecated, archived, created_at, updated_at.
func (d *Dialect) ScanEventType(r Scanner) (hookd.EventType, error) {
	var (
		et      hookd.EventType
		schemas []byte
		flags   sql.NullString
	)
	if err := r.Scan(&et.Name, &et.Description, &schemas, &flags, &et.GroupName, &et.Deprecated, &et.Archived,
		d.ScanTime(&et.CreatedAt), d.ScanTime(&et.UpdatedAt)); err != nil {
		return et, err
	}
	decoded, err := sqlcodec.DecodeStrings(flags)
	if err != nil {
		return et, fmt.Errorf("event type %s: feature flags: %w", et.Name, err)
	}
	et.FeatureFlags, et.FeatureFlag = decoded, FirstFlag(decoded)
	et.Schemas = rawJSON(schemas)
	return et, nil
}

// FirstFlag is an event type's feature_flag column: the first flag, or "" for none.
func FirstFlag(flags []string) string {
	if len(flags) == 0 {
		return ""
	}
	return flags[0]
}

// ScanAttempt reads an attempt: id, delivery_id, message_id, endpoint_id, app_id, number,
// trigger_kind, url, at, duration (µs), status_code, success, error, response, request_headers,
// response_headers.
func (d *Dialect) ScanAttempt(r Scanner) (hookd.Attempt, error) {
	var (
		a           hookd.Attempt
		trigger     string
		dur         int64
		response    []byte
		reqH, respH string
	)
	if err := r.Scan(&a.ID, &a.DeliveryID, &a.MessageID, &a.EndpointID, &a.AppID, &a.Number, &trigger, &a.URL,
		d.ScanTime(&a.At), &dur, &a.StatusCode, &a.Success, &a.Error, &response, &reqH, &respH); err != nil {
		return a, err
	}
	if err := a.DecodeHeaders(reqH, respH); err != nil { // after MessageID and At, which it reads
		return a, err
	}
	a.Trigger = hookd.AttemptTrigger(trigger)
	a.Duration = time.Duration(dur) * time.Microsecond
	a.Response = string(response)
	return a, nil
}

// DeliveryDest returns the scan destinations of a delivery's columns (id, message_id,
// endpoint_id, app_id, status, attempts, next_attempt_at, last_error, created_at, updated_at)
// and a function that finishes dl once they are filled.
func (d *Dialect) DeliveryDest(dl *hookd.Delivery) ([]any, func()) {
	var status string
	dest := []any{&dl.ID, &dl.MessageID, &dl.EndpointID, &dl.AppID, &status, &dl.Attempts,
		d.ScanNullTime(&dl.NextAttemptAt), &dl.LastError, d.ScanTime(&dl.CreatedAt), d.ScanTime(&dl.UpdatedAt)}
	return dest, func() { dl.Status = hookd.DeliveryStatus(status) }
}

// ScanDelivery reads a delivery (see DeliveryDest).
func (d *Dialect) ScanDelivery(r Scanner) (hookd.Delivery, error) {
	var dl hookd.Delivery
	dest, finish := d.DeliveryDest(&dl)
	if err := r.Scan(dest...); err != nil {
		return dl, err
	}
	finish()
	return dl, nil
}

// MessageDest returns the scan destinations of a message's columns (id, app_id, event_id,
// event_type, channels, payload, created_at, tags, payload_expires_at) and a function that
// finishes msg once they are filled.
func (d *Dialect) MessageDest(msg *hookd.Message) ([]any, func() error) {
	var (
		eventID, channels, tags sql.NullString
		payload                 []byte
	)
	dest := []any{&msg.ID, &msg.AppID, &eventID, &msg.EventType, &channels, &payload,
		d.ScanTime(&msg.CreatedAt), &tags, d.ScanNullTime(&msg.PayloadExpiresAt)}
	return dest, func() error {
		msg.EventID = eventID.String
		var err error
		if msg.Channels, err = sqlcodec.DecodeStrings(channels); err != nil {
			return err
		}
		if msg.Tags, err = sqlcodec.DecodeStrings(tags); err != nil {
			return err
		}
		msg.Payload = rawJSON(payload)
		return nil
	}
}

// ScanMessage reads a message (see MessageDest).
func (d *Dialect) ScanMessage(r Scanner) (hookd.Message, error) {
	var msg hookd.Message
	dest, finish := d.MessageDest(&msg)
	if err := r.Scan(dest...); err != nil {
		return msg, err
	}
	return msg, finish()
}

// ScanOperationalEvent reads an operational event: id, type, app_id, endpoint_id, message_id,
// reason, at.
func (d *Dialect) ScanOperationalEvent(r Scanner) (hookd.OperationalEvent, error) {
	var ev hookd.OperationalEvent
	err := r.Scan(&ev.ID, &ev.Type, &ev.AppID, &ev.EndpointID, &ev.MessageID, &ev.Reason, d.ScanTime(&ev.At))
	return ev, err
}

// rawJSON is a JSON column's bytes as read, nil for NULL.
func rawJSON(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// ScanToken reads a server token: hash, app_id, created_at, expires_at, read_only,
// feature_flags.
func (d *Dialect) ScanToken(r Scanner) (hookd.Token, error) {
	var (
		tok          hookd.Token
		appID, flags sql.NullString
	)
	if err := r.Scan(&tok.Hash, &appID, d.ScanTime(&tok.CreatedAt), d.ScanNullTime(&tok.ExpiresAt),
		&tok.ReadOnly, &flags); err != nil {
		return tok, err
	}
	tok.AppID = appID.String
	var err error
	if tok.FeatureFlags, err = sqlcodec.DecodeStrings(flags); err != nil {
		return tok, fmt.Errorf("feature flags: %w", err)
	}
	return tok, nil
}

// ScanSession reads a browser session: hash, token_hash, app_id, created_at, expires_at.
func (d *Dialect) ScanSession(r Scanner) (hookd.Session, error) {
	var (
		s     hookd.Session
		appID sql.NullString
	)
	err := r.Scan(&s.Hash, &s.TokenHash, &appID, d.ScanTime(&s.CreatedAt), d.ScanTime(&s.ExpiresAt))
	s.AppID = appID.String
	return s, err
}

// ScanIdempotentResponse reads a stored response: key, status, body, request_hash, created_at,
// expires_at.
func (d *Dialect) ScanIdempotentResponse(r Scanner) (hookd.IdempotentResponse, error) {
	var resp hookd.IdempotentResponse
	err := r.Scan(&resp.Key, &resp.Status, &resp.Body, &resp.RequestHash, d.ScanTime(&resp.CreatedAt),
		d.ScanTime(&resp.ExpiresAt))
	return resp, err
}

// ScanSigningKey reads an endpoint's signing key: secret, created_at, expires_at.
func (d *Dialect) ScanSigningKey(r Scanner) (hookd.SigningKey, error) {
	var k hookd.SigningKey
	err := r.Scan(&k.Secret, d.ScanTime(&k.CreatedAt), d.ScanNullTime(&k.ExpiresAt))
	return k, err
}

// ScanOutboxRecord reads an event of package bus's outbox: id, name, aggregate_id, payload,
// occurred_at, status, attempts, next_attempt_at, last_error, created_at, updated_at.
func (d *Dialect) ScanOutboxRecord(r Scanner) (bus.Record, error) {
	var (
		e      bus.Record
		status string
	)
	err := r.Scan(&e.ID, &e.Name, &e.AggregateID, &e.Payload, d.ScanTime(&e.OccurredAt), &status, &e.Attempts,
		d.ScanTime(&e.NextAttempt), &e.LastError, d.ScanTime(&e.CreatedAt), d.ScanTime(&e.UpdatedAt))
	e.Status = bus.Status(status)
	return e, err
}
