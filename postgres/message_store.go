package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

const messageCols = `m.id, m.app_id, m.event_id, m.event_type, m.channels::text, m.payload, m.created_at,
	m.tags::text, m.payload_expires_at`

// InsertMessage writes msg unless the application already has a message with its event id; then
// it returns that message and inserted false. A missing application is hookd.ErrNotFound; a
// message id taken, hookd.ErrConflict.
//
// Of two transactions inserting one event id at once, the second waits on the unique index for
// the first to commit, inserts nothing, and reads the first's message (READ COMMITTED: each
// statement sees what committed before it began).
func (t *txn) InsertMessage(ctx context.Context, msg *hookd.Message) (*hookd.Message, bool, error) {
	channels, err := sqlcodec.EncodeStrings(msg.Channels)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	tags, err := sqlcodec.EncodeStrings(msg.Tags)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	n, err := t.c.exec(ctx, `INSERT INTO hookd_messages (id, app_id, event_id, event_type, channels, payload, created_at,
			tags, payload_expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`,
		msg.ID, msg.AppID, sqlcodec.NullString(msg.EventID), msg.EventType, channels, rawBytes(msg.Payload), msg.CreatedAt,
		tags, msg.PayloadExpiresAt)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, classify(err))
	}
	if n == 1 {
		if err := t.insertLabels(ctx, msg, "hookd_message_channels", "channel", msg.Channels); err != nil {
			return nil, false, fmt.Errorf("insert message %s: channels: %w", msg.ID, err)
		}
		if err := t.insertLabels(ctx, msg, "hookd_message_tags", "tag", msg.Tags); err != nil {
			return nil, false, fmt.Errorf("insert message %s: tags: %w", msg.ID, err)
		}
		return nil, true, nil
	}
	existing, err := dialect.ScanMessage(t.c.queryRow(ctx, `SELECT `+messageCols+` FROM hookd_messages m
		WHERE m.app_id = $1 AND m.event_id = $2`, msg.AppID, msg.EventID))
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: read message with event id %s: %w", msg.ID, msg.EventID, classify(err))
	}
	return &existing, false, nil
}

// insertLabels writes the message's channels or tags (labels) one a row into table, whose label
// column is col.
func (t *txn) insertLabels(ctx context.Context, msg *hookd.Message, table, col string, labels []string) error {
	labels = sqlstore.Unique(labels)
	if len(labels) == 0 {
		return nil
	}
	_, err := t.c.exec(ctx, `INSERT INTO `+table+` (app_id, `+col+`, message_id)
		SELECT $1, l, $3 FROM unnest($2::text[]) AS l`, msg.AppID, labels, msg.ID)
	if err != nil {
		return classify(err)
	}
	return nil
}

// ExpungeMessagePayload sets the message's payload to NULL: it reads back as a nil Payload.
func (t *txn) ExpungeMessagePayload(ctx context.Context, messageID string) error {
	err := mustAffect(t.c.exec(ctx, `UPDATE hookd_messages SET payload = NULL, payload_expires_at = NULL
		WHERE id = $1`, messageID))
	if err != nil {
		return fmt.Errorf("expunge payload of message %s: %w", messageID, err)
	}
	return nil
}

// ExpirePayloads deletes the payloads expired at now, at most limit of them, in one statement
// that walks the index of the expiry times and skips rows another sweep holds
// (hookd.PayloadExpirer).
func (s *Store) ExpirePayloads(ctx context.Context, now time.Time, limit int) (int, error) {
	n, err := s.c.exec(ctx, `UPDATE hookd_messages SET payload = NULL, payload_expires_at = NULL
		WHERE id = ANY (ARRAY (SELECT id FROM hookd_messages WHERE payload_expires_at <= $1
			LIMIT $2 FOR UPDATE SKIP LOCKED))`, now, limit)
	if err != nil {
		return 0, fmt.Errorf("expire payloads: %w", classify(err))
	}
	return int(n), nil
}
