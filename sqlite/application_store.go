package sqlite

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

const applicationCols = `a.id, a.uid, a.name, a.throttle_rate, a.metadata, a.created_at, a.updated_at, a.retry_schedule, a.timeout_ms`

// InsertApplication writes a new application. An id or uid taken is a *hookd.ConflictError
// naming it (hookd.ErrConflict).
func (t *txn) InsertApplication(ctx context.Context, app *hookd.Application) error {
	metadata, err := sqlcodec.EncodeMap(app.Metadata)
	if err != nil {
		return fmt.Errorf("insert application %s: %w", app.ID, err)
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO hookd_applications
		(id, uid, name, throttle_rate, metadata, created_at, updated_at, retry_schedule, timeout_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		app.ID, sqlcodec.NullString(app.UID), app.Name, app.ThrottleRate, metadata,
		micros(app.CreatedAt), micros(app.UpdatedAt), sqlcodec.EncodeSchedule(app.RetrySchedule),
		sqlcodec.EncodeTimeout(app.AttemptTimeout))
	if err != nil {
		return fmt.Errorf("insert application %s: %w", app.ID, conflictOf(classify(err), "application", app.ID, app.UID))
	}
	return nil
}

// UpdateApplication writes every field of app but ID and CreatedAt.
func (t *txn) UpdateApplication(ctx context.Context, app *hookd.Application) error {
	metadata, err := sqlcodec.EncodeMap(app.Metadata)
	if err != nil {
		return fmt.Errorf("update application %s: %w", app.ID, err)
	}
	err = mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_applications
		SET uid = ?, name = ?, throttle_rate = ?, metadata = ?, updated_at = ?, retry_schedule = ?,
		timeout_ms = ? WHERE id = ?`,
		sqlcodec.NullString(app.UID), app.Name, app.ThrottleRate, metadata, micros(app.UpdatedAt),
		sqlcodec.EncodeSchedule(app.RetrySchedule), sqlcodec.EncodeTimeout(app.AttemptTimeout), app.ID))
	if err != nil {
		return fmt.Errorf("update application %s: %w", app.ID, conflictOf(err, "application", app.ID, app.UID))
	}
	return nil
}

// DeleteApplication deletes the application; foreign keys cascade to its endpoints and their
// keys, its messages, and their deliveries and attempts. Operational events stay.
func (t *txn) DeleteApplication(ctx context.Context, id string) error {
	err := mustAffect(t.q.ExecContext(ctx, `DELETE FROM hookd_applications WHERE id = ?`, id))
	if err != nil {
		return fmt.Errorf("delete application %s: %w", id, err)
	}
	return nil
}
