package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

const endpointCols = `e.id, e.app_id, e.uid, e.url, e.description, e.version, e.event_types, e.channels,
	e.disabled, e.disabled_reason, e.disabled_at, e.rate_limit, e.max_in_flight, e.headers, e.scheme,
	e.metadata, e.created_at, e.updated_at, e.last_attempt_at, e.last_status, e.last_error,
	e.last_success_at, e.failing_since, e.consecutive_failures, e.retry_schedule, e.timeout_ms, e.ordered`

const getEndpointByIDSQL = `SELECT ` + endpointCols + ` FROM hookd_endpoints e WHERE e.id = ?`

// GetEndpointByID finds an endpoint by id alone.
func (q *queries) GetEndpointByID(ctx context.Context, id string) (*hookd.Endpoint, error) {
	ep, err := dialect.ScanEndpoint(q.stmt(ctx, q.stmts.getEndpointByID).QueryRowContext(ctx, id))
	if err != nil {
		return nil, fmt.Errorf("get endpoint %s: %w", id, classify(err))
	}
	return &ep, nil
}

// InsertEndpoint writes the endpoint, every field as given (health included), and its first key.
// A missing application is hookd.ErrNotFound; an id, or a uid taken in the application, is a
// *hookd.ConflictError naming it (hookd.ErrConflict).
func (t *txn) InsertEndpoint(ctx context.Context, ep *hookd.Endpoint, key hookd.SigningKey) error {
	c, err := sqlcodec.EncodeEndpointConfig(ep)
	if err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, err)
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO hookd_endpoints (id, app_id, uid, url, description, version,
		event_types, channels, disabled, disabled_reason, disabled_at, rate_limit, max_in_flight, headers,
		scheme, metadata, created_at, updated_at, last_attempt_at, last_status, last_error, last_success_at,
		failing_since, consecutive_failures, retry_schedule, timeout_ms, ordered)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ep.ID, ep.AppID, sqlcodec.NullString(ep.UID), ep.URL, ep.Description, ep.Version,
		c.EventTypes, c.Channels, ep.Disabled, ep.DisabledReason, nullMicros(ep.DisabledAt),
		ep.RateLimit, ep.MaxInFlight, c.Headers, string(ep.Scheme), c.Metadata,
		micros(ep.CreatedAt), micros(ep.UpdatedAt), nullMicros(ep.LastAttemptAt), ep.LastStatus,
		ep.LastError, nullMicros(ep.LastSuccessAt), nullMicros(ep.FailingSince), ep.ConsecutiveFailures,
		sqlcodec.EncodeSchedule(ep.RetrySchedule), sqlcodec.EncodeTimeout(ep.AttemptTimeout), ep.Ordered)
	if err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, conflictOf(classify(err), "endpoint", ep.ID, ep.UID))
	}
	if err := t.insertKey(ctx, ep.ID, key); err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// LockEndpointCount counts the application's endpoints (a missing application is
// hookd.ErrNotFound). SQLite lets one transaction write at a time, and the store's transactions
// take their turn before they begin, so no other one can add an endpoint until this one ends.
func (t *txn) LockEndpointCount(ctx context.Context, appID string) (int, error) {
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM hookd_endpoints WHERE app_id = a.id)
		FROM hookd_applications a WHERE a.id = ?`, appID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count endpoints of %s: %w", appID, classify(err))
	}
	return n, nil
}

func (t *txn) insertKey(ctx context.Context, endpointID string, key hookd.SigningKey) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO hookd_endpoint_keys (endpoint_id, secret, created_at, expires_at)
		VALUES (?, ?, ?, ?)`, endpointID, key.Secret, micros(key.CreatedAt), nullMicros(key.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert signing key: %w", classify(err))
	}
	return nil
}

// UpdateEndpoint writes the endpoint's configuration: uid, URL, description, version, filters,
// limits, headers, scheme, retry policy, metadata and UpdatedAt. Not its application, health or Disabled*.
func (t *txn) UpdateEndpoint(ctx context.Context, ep *hookd.Endpoint) error {
	c, err := sqlcodec.EncodeEndpointConfig(ep)
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", ep.ID, err)
	}
	err = mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_endpoints SET uid = ?, url = ?, description = ?,
		version = ?, event_types = ?, channels = ?, rate_limit = ?, max_in_flight = ?, headers = ?,
		scheme = ?, metadata = ?, updated_at = ?, retry_schedule = ?, timeout_ms = ?, ordered = ? WHERE id = ?`,
		sqlcodec.NullString(ep.UID), ep.URL, ep.Description, ep.Version, c.EventTypes, c.Channels, ep.RateLimit,
		ep.MaxInFlight, c.Headers, string(ep.Scheme), c.Metadata, micros(ep.UpdatedAt),
		sqlcodec.EncodeSchedule(ep.RetrySchedule), sqlcodec.EncodeTimeout(ep.AttemptTimeout), ep.Ordered, ep.ID))
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", ep.ID, conflictOf(err, "endpoint", ep.ID, ep.UID))
	}
	return nil
}

// DeleteEndpoint deletes the endpoint and (by cascade) its keys; its deliveries and attempts stay.
func (t *txn) DeleteEndpoint(ctx context.Context, id string) error {
	err := mustAffect(t.q.ExecContext(ctx, `DELETE FROM hookd_endpoints WHERE id = ?`, id))
	if err != nil {
		return fmt.Errorf("delete endpoint %s: %w", id, err)
	}
	return nil
}

// SetEndpointDisabled disables the endpoint (reason, DisabledAt = at) or enables it (reason and
// DisabledAt cleared, ConsecutiveFailures and FailingSince reset). Either way UpdatedAt = at.
func (t *txn) SetEndpointDisabled(ctx context.Context, id string, disabled bool, reason string, at time.Time) error {
	var res sql.Result
	var err error
	if disabled {
		res, err = t.q.ExecContext(ctx, `UPDATE hookd_endpoints SET disabled = 1, disabled_reason = ?,
			disabled_at = ?, updated_at = ? WHERE id = ?`, reason, micros(at), micros(at), id)
	} else {
		res, err = t.q.ExecContext(ctx, `UPDATE hookd_endpoints SET disabled = 0, disabled_reason = '',
			disabled_at = NULL, consecutive_failures = 0, failing_since = NULL, updated_at = ?
			WHERE id = ?`, micros(at), id)
	}
	if err := mustAffect(res, err); err != nil {
		return fmt.Errorf("set endpoint %s disabled %t: %w", id, disabled, err)
	}
	return nil
}

// AddSigningKey adds key to the endpoint and makes every other key of it expire at expireOthersAt
// at the latest: keys without an expiry or expiring later get expireOthersAt, keys expiring sooner
// keep their expiry.
func (t *txn) AddSigningKey(ctx context.Context, endpointID string, key hookd.SigningKey, expireOthersAt time.Time) error {
	var exists bool
	err := t.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM hookd_endpoints WHERE id = ?)`, endpointID).Scan(&exists)
	if err != nil {
		return fmt.Errorf("add signing key to endpoint %s: %w", endpointID, err)
	}
	if !exists {
		return fmt.Errorf("add signing key to endpoint %s: %w", endpointID, hookd.ErrNotFound)
	}
	until := micros(expireOthersAt)
	_, err = t.q.ExecContext(ctx, `UPDATE hookd_endpoint_keys SET expires_at = ?1
		WHERE endpoint_id = ?2 AND (expires_at IS NULL OR expires_at > ?1)`, until, endpointID)
	if err != nil {
		return fmt.Errorf("add signing key to endpoint %s: expire others: %w", endpointID, err)
	}
	if err := t.insertKey(ctx, endpointID, key); err != nil {
		return fmt.Errorf("add signing key to endpoint %s: %w", endpointID, err)
	}
	return nil
}
