package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

const eventTypeCols = `t.name, t.description, t.schemas, t.feature_flags, t.group_name, t.deprecated, t.archived,
	t.created_at, t.updated_at`

// UpsertEventType creates the event type or updates every field of it but CreatedAt. Archived is
// written as given, so an upsert with Archived false (the usual case) un-archives.
func (t *txn) UpsertEventType(ctx context.Context, et *hookd.EventType) error {
	var schemas any
	if et.Schemas != nil {
		schemas = string(et.Schemas)
	}
	flags := et.Flags()
	encoded, err := sqlcodec.EncodeStrings(flags)
	if err != nil {
		return fmt.Errorf("upsert event type %s: %w", et.Name, err)
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO hookd_event_types
		(name, description, schemas, feature_flag, feature_flags, group_name, deprecated, archived, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET description = excluded.description, schemas = excluded.schemas,
			feature_flag = excluded.feature_flag, feature_flags = excluded.feature_flags,
			group_name = excluded.group_name, deprecated = excluded.deprecated, archived = excluded.archived,
			updated_at = excluded.updated_at`,
		et.Name, et.Description, schemas, sqlstore.FirstFlag(flags), encoded, et.GroupName, et.Deprecated, et.Archived,
		micros(et.CreatedAt), micros(et.UpdatedAt))
	if err != nil {
		return fmt.Errorf("upsert event type %s: %w", et.Name, classify(err))
	}
	return nil
}

// ArchiveEventType marks an event type archived, with UpdatedAt = at.
func (t *txn) ArchiveEventType(ctx context.Context, name string, at time.Time) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_event_types SET archived = 1, updated_at = ?
		WHERE name = ?`, micros(at), name))
	if err != nil {
		return fmt.Errorf("archive event type %s: %w", name, err)
	}
	return nil
}

// DeleteEventType removes an event type.
func (t *txn) DeleteEventType(ctx context.Context, name string) error {
	err := mustAffect(t.q.ExecContext(ctx, `DELETE FROM hookd_event_types WHERE name = ?`, name))
	if err != nil {
		return fmt.Errorf("delete event type %s: %w", name, err)
	}
	return nil
}
