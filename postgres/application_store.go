package postgres

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

const applicationCols = `a.id, a.uid, a.name, a.throttle_rate, a.metadata::text, a.created_at, a.updated_at, a.retry_schedule, a.timeout_ms`

// InsertApplication writes a new application. An id or uid taken is a *hookd.ConflictError
// naming it (hookd.ErrConflict).
func (t *txn) InsertApplication(ctx context.Context, app *hookd.Application) error {
	metadata, err := sqlcodec.EncodeMap(app.Metadata)
	if err != nil {
		return fmt.Errorf("insert application %s: %w", app.ID, err)
	}
	_, err = t.c.exec(ctx, `INSERT INTO hookd_applications
		(id, uid, name, throttle_rate, metadata, created_at, updated_at, retry_schedule, timeout_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		app.ID, sqlcodec.NullString(app.UID), app.Name, app.ThrottleRate, metadata, app.CreatedAt, app.UpdatedAt,
		sqlcodec.EncodeSchedule(app.RetrySchedule), sqlcodec.EncodeTimeout(app.AttemptTimeout))
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
	err = mustAffect(t.c.exec(ctx, `UPDATE hookd_applications
		SET uid = $1, name = $2, throttle_rate = $3, metadata = $4, updated_at = $5, retry_schedule = $6,
		timeout_ms = $7 WHERE id = $8`,
		sqlcodec.NullString(app.UID), app.Name, app.ThrottleRate, metadata, app.UpdatedAt,
		sqlcodec.EncodeSchedule(app.RetrySchedule), sqlcodec.EncodeTimeout(app.AttemptTimeout), app.ID))
	if err != nil {
		return fmt.Errorf("update application %s: %w", app.ID, conflictOf(err, "application", app.ID, app.UID))
	}
	return nil
}

// DeleteApplication deletes the application; foreign keys cascade to its endpoints and their
// keys, its messages, and their deliveries and attempts. Operational events stay.
func (t *txn) DeleteApplication(ctx context.Context, id string) error {
	err := mustAffect(t.c.exec(ctx, `DELETE FROM hookd_applications WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete application %s: %w", id, err)
	}
	return nil
}
