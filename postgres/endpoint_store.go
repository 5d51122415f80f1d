package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

const endpointCols = `e.id, e.app_id, e.uid, e.url, e.description, e.version, e.event_types::text, e.channels::text,
	e.disabled, e.disabled_reason, e.disabled_at, e.rate_limit, e.max_in_flight, e.headers::text, e.scheme,
	e.metadata::text, e.created_at, e.updated_at, e.last_attempt_at, e.last_status, e.last_error,
	e.last_success_at, e.failing_since, e.consecutive_failures, e.retry_schedule, e.timeout_ms, e.ordered`

// GetEndpointByID finds an endpoint by id alone.
func (q *queries) GetEndpointByID(ctx context.Context, id string) (*hookd.Endpoint, error) {
	return sqlstore.Get(ctx, q.reader(), dialect.ScanEndpoint, `SELECT `+endpointCols+` FROM hookd_endpoints e WHERE e.id = $1`,
		[]any{id}, "get endpoint %s", id)
}

// InsertEndpoint writes the endpoint, every field as given (health included), and its first key.
// A missing application is hookd.ErrNotFound; an id, or a uid taken in the application, is a
// *hookd.ConflictError naming it (hookd.ErrConflict).
func (t *txn) InsertEndpoint(ctx context.Context, ep *hookd.Endpoint, key hookd.SigningKey) error {
	c, err := sqlcodec.EncodeEndpointConfig(ep)
	if err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, err)
	}
	_, err = t.c.exec(ctx, `INSERT INTO hookd_endpoints (id, app_id, uid, url, description, version,
		event_types, channels, disabled, disabled_reason, disabled_at, rate_limit, max_in_flight, headers,
		scheme, metadata, created_at, updated_at, last_attempt_at, last_status, last_error, last_success_at,
		failing_since, consecutive_failures, retry_schedule, timeout_ms, ordered)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			$21, $22, $23, $24, $25, $26, $27)`,
		ep.ID, ep.AppID, sqlcodec.NullString(ep.UID), ep.URL, ep.Description, ep.Version,
		c.EventTypes, c.Channels, ep.Disabled, ep.DisabledReason, nullTime(ep.DisabledAt),
		ep.RateLimit, ep.MaxInFlight, c.Headers, string(ep.Scheme), c.Metadata,
		ep.CreatedAt, ep.UpdatedAt, nullTime(ep.LastAttemptAt), ep.LastStatus,
		ep.LastError, nullTime(ep.LastSuccessAt), nullTime(ep.FailingSince), ep.ConsecutiveFailures,
		sqlcodec.EncodeSchedule(ep.RetrySchedule), sqlcodec.EncodeTimeout(ep.AttemptTimeout), ep.Ordered)
	if err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, conflictOf(classify(err), "endpoint", ep.ID, ep.UID))
	}
	if err := t.insertKey(ctx, ep.ID, key); err != nil {
		return fmt.Errorf("insert endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// LockEndpointCount locks the application's row (FOR NO KEY UPDATE: the foreign-key checks of
// concurrent sends still pass) and then counts its endpoints, in a statement of its own: a
// concurrent call in the same application waits for this transaction to end, and its count's
// snapshot, taken after the wait, holds what this one committed.
func (t *txn) LockEndpointCount(ctx context.Context, appID string) (int, error) {
	var id string
	err := t.c.queryRow(ctx, `SELECT id FROM hookd_applications WHERE id = $1 FOR NO KEY UPDATE`, appID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("lock application %s: %w", appID, classify(err))
	}
	var n int
	if err := t.c.queryRow(ctx, `SELECT count(*) FROM hookd_endpoints WHERE app_id = $1`, appID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count endpoints of %s: %w", appID, classify(err))
	}
	return n, nil
}

func (t *txn) insertKey(ctx context.Context, endpointID string, key hookd.SigningKey) error {
	_, err := t.c.exec(ctx, `INSERT INTO hookd_endpoint_keys (endpoint_id, secret, created_at, expires_at)
		VALUES ($1, $2, $3, $4)`, endpointID, key.Secret, key.CreatedAt, nullTime(key.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert signing key: %w", classify(err))
	}
	return nil
}

// UpdateEndpoint writes the endpoint's configuration: uid, URL, description, version, filters,
// limits, headers, scheme, metadata and UpdatedAt. Not its application, health or Disabled*.
func (t *txn) UpdateEndpoint(ctx context.Context, ep *hookd.Endpoint) error {
	c, err := sqlcodec.EncodeEndpointConfig(ep)
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", ep.ID, err)
	}
	err = mustAffect(t.c.exec(ctx, `UPDATE hookd_endpoints SET uid = $1, url = $2, description = $3,
		version = $4, event_types = $5, channels = $6, rate_limit = $7, max_in_flight = $8, headers = $9,
		scheme = $10, metadata = $11, updated_at = $12, retry_schedule = $13, timeout_ms = $14, ordered = $15 WHERE id = $16`,
		sqlcodec.NullString(ep.UID), ep.URL, ep.Description, ep.Version, c.EventTypes, c.Channels, ep.RateLimit,
		ep.MaxInFlight, c.Headers, string(ep.Scheme), c.Metadata, ep.UpdatedAt,
		sqlcodec.EncodeSchedule(ep.RetrySchedule), sqlcodec.EncodeTimeout(ep.AttemptTimeout), ep.Ordered, ep.ID))
	if err != nil {
		return fmt.Errorf("update endpoint %s: %w", ep.ID, conflictOf(err, "endpoint", ep.ID, ep.UID))
	}
	return nil
}

// DeleteEndpoint deletes the endpoint and (by cascade) its keys; its deliveries and attempts stay.
func (t *txn) DeleteEndpoint(ctx context.Context, id string) error {
	err := mustAffect(t.c.exec(ctx, `DELETE FROM hookd_endpoints WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete endpoint %s: %w", id, err)
	}
	return nil
}

// SetEndpointDisabled disables the endpoint (reason, DisabledAt = at) or enables it (reason and
// DisabledAt cleared, ConsecutiveFailures and FailingSince reset). Either way UpdatedAt = at.
func (t *txn) SetEndpointDisabled(ctx context.Context, id string, disabled bool, reason string, at time.Time) error {
	var (
		n   int64
		err error
	)
	if disabled {
		n, err = t.c.exec(ctx, `UPDATE hookd_endpoints SET disabled = true, disabled_reason = $1,
			disabled_at = $2, updated_at = $2 WHERE id = $3`, reason, at, id)
	} else {
		n, err = t.c.exec(ctx, `UPDATE hookd_endpoints SET disabled = false, disabled_reason = '',
			disabled_at = NULL, consecutive_failures = 0, failing_since = NULL, updated_at = $1
			WHERE id = $2`, at, id)
	}
	if err := mustAffect(n, err); err != nil {
		return fmt.Errorf("set endpoint %s disabled %t: %w", id, disabled, err)
	}
	return nil
}

// AddSigningKey adds key to the endpoint and makes every other key of it expire at expireOthersAt
// at the latest: keys without an expiry or expiring later get expireOthersAt, keys expiring sooner
// keep their expiry. A missing endpoint is hookd.ErrNotFound.
func (t *txn) AddSigningKey(ctx context.Context, endpointID string, key hookd.SigningKey, expireOthersAt time.Time) error {
	_, err := t.c.exec(ctx, `UPDATE hookd_endpoint_keys SET expires_at = $1
		WHERE endpoint_id = $2 AND (expires_at IS NULL OR expires_at > $1)`, expireOthersAt, endpointID)
	if err != nil {
		return fmt.Errorf("add signing key to endpoint %s: expire others: %w", endpointID, err)
	}
	// The key's foreign key finds a missing endpoint.
	if err := t.insertKey(ctx, endpointID, key); err != nil {
		return fmt.Errorf("add signing key to endpoint %s: %w", endpointID, err)
	}
	return nil
}
