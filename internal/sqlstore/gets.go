package sqlstore

import (
	"context"
	"time"

	"github.com/hookd/hookd"
)

// The reads of one row by its key. A value matched twice is bound twice: Bind numbers each ?
// on its own.

// GetApplication finds an application by id or, failing that, by uid.
func (r Reads) GetApplication(ctx context.Context, idOrUID string) (*hookd.Application, error) {
	return Get(ctx, r.q, r.dialect.ScanApplication, r.dialect.Bind(`SELECT `+r.cols.Application+` FROM hookd_applications a
		WHERE a.id = ? OR a.uid = ? ORDER BY a.id = ? DESC LIMIT 1`),
		[]any{idOrUID, idOrUID, idOrUID}, "get application %s", idOrUID)
}

// GetEndpoint finds an endpoint of the application by id or, failing that, by uid.
func (r Reads) GetEndpoint(ctx context.Context, appID, idOrUID string) (*hookd.Endpoint, error) {
	return Get(ctx, r.q, r.dialect.ScanEndpoint, r.dialect.Bind(`SELECT `+r.cols.Endpoint+` FROM hookd_endpoints e
		WHERE e.app_id = ? AND (e.id = ? OR e.uid = ?) ORDER BY e.id = ? DESC LIMIT 1`),
		[]any{appID, idOrUID, idOrUID, idOrUID}, "get endpoint %s of application %s", idOrUID, appID)
}

// GetEventType finds an event type by name, archived or not.
func (r Reads) GetEventType(ctx context.Context, name string) (*hookd.EventType, error) {
	return Get(ctx, r.q, r.dialect.ScanEventType, r.dialect.Bind(`SELECT `+r.cols.EventType+` FROM hookd_event_types t
		WHERE t.name = ?`), []any{name}, "get event type %s", name)
}

// GetMessage finds a message of the application by id or, failing that, by event id.
func (r Reads) GetMessage(ctx context.Context, appID, idOrEventID string) (*hookd.Message, error) {
	return Get(ctx, r.q, r.dialect.ScanMessage, r.dialect.Bind(`SELECT `+r.cols.Message+` FROM hookd_messages m
		WHERE m.app_id = ? AND (m.id = ? OR m.event_id = ?) ORDER BY m.id = ? DESC LIMIT 1`),
		[]any{appID, idOrEventID, idOrEventID, idOrEventID}, "get message %s of application %s", idOrEventID, appID)
}

// GetDelivery finds a delivery by id.
func (r Reads) GetDelivery(ctx context.Context, id string) (*hookd.Delivery, error) {
	return Get(ctx, r.q, r.dialect.ScanDelivery, r.dialect.Bind(`SELECT `+r.cols.Delivery+` FROM hookd_deliveries d
		WHERE d.id = ?`), []any{id}, "get delivery %s", id)
}

// GetDeliveryFor finds the delivery of a message to an endpoint.
func (r Reads) GetDeliveryFor(ctx context.Context, messageID, endpointID string) (*hookd.Delivery, error) {
	return Get(ctx, r.q, r.dialect.ScanDelivery, r.dialect.Bind(`SELECT `+r.cols.Delivery+` FROM hookd_deliveries d
		WHERE d.message_id = ? AND d.endpoint_id = ?`),
		[]any{messageID, endpointID}, "get delivery of message %s to endpoint %s", messageID, endpointID)
}

// GetAttempt finds an attempt by id.
func (r Reads) GetAttempt(ctx context.Context, id string) (*hookd.Attempt, error) {
	return Get(ctx, r.q, r.dialect.ScanAttempt, r.dialect.Bind(`SELECT `+r.cols.Attempt+` FROM hookd_attempts a
		WHERE a.id = ?`), []any{id}, "get attempt %s", id)
}

// GetToken finds a server token by hash; one that expired at or before now is hookd.ErrNotFound.
func (r Reads) GetToken(ctx context.Context, hash string, now time.Time) (*hookd.Token, error) {
	return Get(ctx, r.q, r.dialect.ScanToken, r.dialect.Bind(`SELECT `+r.cols.Token+` FROM hookd_tokens
		WHERE hash = ? AND (expires_at IS NULL OR expires_at > ?)`), []any{hash, r.dialect.Time(now)}, "get token")
}

// GetSession finds a browser session by hash; one that expired at or before now is
// hookd.ErrNotFound.
func (r Reads) GetSession(ctx context.Context, hash string, now time.Time) (*hookd.Session, error) {
	return Get(ctx, r.q, r.dialect.ScanSession, r.dialect.Bind(`SELECT hash, token_hash, app_id, created_at, expires_at
		FROM hookd_sessions WHERE hash = ? AND expires_at > ?`), []any{hash, r.dialect.Time(now)}, "get session")
}

// GetIdempotentResponse finds a stored response by key; one that expired at or before now is
// hookd.ErrNotFound.
func (r Reads) GetIdempotentResponse(ctx context.Context, key string, now time.Time) (*hookd.IdempotentResponse, error) {
	return Get(ctx, r.q, r.dialect.ScanIdempotentResponse, r.dialect.Bind(`SELECT key, status, body, request_hash,
		created_at, expires_at FROM hookd_idempotency WHERE key = ? AND expires_at > ?`),
		[]any{key, r.dialect.Time(now)}, "get idempotent response")
}

// FirstPendingDelivery finds the endpoint's pending delivery with the lowest id (an ordered
// endpoint's head), through the index (endpoint_id, status, id).
func (r Reads) FirstPendingDelivery(ctx context.Context, endpointID string) (*hookd.Delivery, error) {
	return Get(ctx, r.q, r.dialect.ScanDelivery, r.dialect.Bind(`SELECT `+r.cols.Delivery+` FROM hookd_deliveries d
		WHERE d.endpoint_id = ? AND d.status = 'pending' ORDER BY d.id LIMIT 1`),
		[]any{endpointID}, "first pending delivery to endpoint %s", endpointID)
}
