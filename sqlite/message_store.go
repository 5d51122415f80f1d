package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

const messageCols = `m.id, m.app_id, m.event_id, m.event_type, m.channels, m.payload, m.created_at, m.tags, m.payload_expires_at`

// insertMessageSQL writes nothing when the application already has a message with the event id
// (NULL event ids never conflict); a taken id still fails.
const insertMessageSQL = `INSERT INTO hookd_messages (id, app_id, event_id, event_type, channels, payload, created_at,
		tags, payload_expires_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`

// InsertMessage writes msg unless the application already has a message with its event id; then
// it returns that message and inserted false. A missing application is hookd.ErrNotFound.
func (t *txn) InsertMessage(ctx context.Context, msg *hookd.Message) (*hookd.Message, bool, error) {
	channels, err := sqlcodec.EncodeStrings(msg.Channels)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	tags, err := sqlcodec.EncodeStrings(msg.Tags)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	res, err := t.stmt(ctx, t.stmts.insertMessage).ExecContext(ctx, msg.ID, msg.AppID, sqlcodec.NullString(msg.EventID),
		msg.EventType, channels, rawJSON(msg.Payload), micros(msg.CreatedAt), tags, nullMicros(msg.PayloadExpiresAt))
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
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
	row := t.q.QueryRowContext(ctx, `SELECT `+messageCols+` FROM hookd_messages m
		WHERE m.app_id = ? AND m.event_id = ?`, msg.AppID, msg.EventID)
	existing, err := dialect.ScanMessage(row)
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
	args := make([]any, 0, 3*len(labels))
	for _, l := range labels {
		args = append(args, msg.AppID, l, msg.ID)
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO `+table+` (app_id, `+col+`, message_id) VALUES `+
		valuesList(len(labels), 3), args...)
	if err != nil {
		return classify(err)
	}
	return nil
}

// ExpungeMessagePayload sets the message's payload to NULL: it reads back as a nil Payload.
func (t *txn) ExpungeMessagePayload(ctx context.Context, messageID string) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_messages SET payload = NULL, payload_expires_at = NULL
		WHERE id = ?`, messageID))
	if err != nil {
		return fmt.Errorf("expunge payload of message %s: %w", messageID, err)
	}
	return nil
}

// ExpirePayloads deletes the payloads expired at now, at most limit of them, in one statement
// that walks the index of the expiry times (hookd.PayloadExpirer). It is a background write.
func (s *Store) ExpirePayloads(ctx context.Context, now time.Time, limit int) (int, error) {
	var n int64
	err := s.InTx(hookd.BackgroundWrite(ctx), func(tx hookd.Tx) error {
		res, err := tx.(*txn).q.ExecContext(ctx, `UPDATE hookd_messages SET payload = NULL, payload_expires_at = NULL
			WHERE id IN (SELECT id FROM hookd_messages WHERE payload_expires_at <= ? LIMIT ?)`, micros(now), limit)
		if err != nil {
			return classify(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire payloads: %w", err)
	}
	return int(n), nil
}

// placeholders returns "?, ?, ..." with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// TypeOldAttempts gives at most limit attempts recorded before migration 17, whose event_type
// is NULL, their message's event type (an empty one for an attempt whose message is gone, so that none is
// picked again), reading them through the NULL range of hookd_attempts_endpoint_event_type.
func (s *Store) TypeOldAttempts(ctx context.Context, limit int) (int, error) {
	var n int64
	err := s.InTx(hookd.BackgroundWrite(ctx), func(tx hookd.Tx) error {
		res, err := tx.(*txn).q.ExecContext(ctx, `UPDATE hookd_attempts
			SET event_type = COALESCE((SELECT m.event_type FROM hookd_messages m WHERE m.id = hookd_attempts.message_id), '')
			WHERE rowid IN (SELECT rowid FROM hookd_attempts WHERE event_type IS NULL LIMIT ?)`, limit)
		if err != nil {
			return classify(err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("type old attempts: %w", err)
	}
	return int(n), nil
}
