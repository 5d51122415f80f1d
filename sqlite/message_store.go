package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

const messageCols = `m.id, m.app_id, m.event_id, m.event_type, m.channels, m.payload, m.created_at`

// insertMessageSQL writes nothing when the application already has a message with the event id
// (NULL event ids never conflict); a taken id still fails.
const insertMessageSQL = `INSERT INTO hookd_messages (id, app_id, event_id, event_type, channels, payload, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`

func scanMessage(r rowScanner) (hookd.Message, error) {
	var (
		msg               hookd.Message
		eventID, channels sql.NullString
		payload           []byte
		createdAt         int64
	)
	if err := r.Scan(&msg.ID, &msg.AppID, &eventID, &msg.EventType, &channels, &payload, &createdAt); err != nil {
		return msg, err
	}
	msg.EventID = eventID.String
	var err error
	if msg.Channels, err = sqlcodec.DecodeStrings(channels); err != nil {
		return msg, err
	}
	msg.Payload = fromRawJSON(payload)
	msg.CreatedAt = fromMicros(createdAt)
	return msg, nil
}

// GetMessage finds a message of the application by id or, failing that, by event id.
func (q *queries) GetMessage(ctx context.Context, appID, idOrEventID string) (*hookd.Message, error) {
	row := q.q.QueryRowContext(ctx, `SELECT `+messageCols+` FROM hookd_messages m
		WHERE m.app_id = ?1 AND (m.id = ?2 OR m.event_id = ?2) ORDER BY m.id = ?2 DESC LIMIT 1`,
		appID, idOrEventID)
	msg, err := scanMessage(row)
	if err != nil {
		return nil, fmt.Errorf("get message %s of application %s: %w", idOrEventID, appID, classify(err))
	}
	return &msg, nil
}

// GetMessagesByID reads the messages of ids in one statement (hookd.MessageBatchReader).
func (q *queries) GetMessagesByID(ctx context.Context, appID string, ids []string) (map[string]hookd.Message, error) {
	out := make(map[string]hookd.Message)
	if len(ids) == 0 {
		return out, nil
	}
	msgs, err := collect(ctx, q.q, `SELECT `+messageCols+` FROM hookd_messages m
		WHERE m.app_id = ? AND m.id IN (SELECT value FROM json_each(?))`, []any{appID, jsonList(ids)}, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("get %d messages of application %s: %w", len(ids), appID, err)
	}
	for _, m := range msgs {
		out[m.ID] = m
	}
	return out, nil
}

// ListMessages lists messages newest first.
func (q *queries) ListMessages(ctx context.Context, f hookd.MessageFilter) (*hookd.Page[hookd.Message], error) {
	l := &listQuery{cols: messageCols, from: "hookd_messages m", key: "m.id", newestFirst: true}
	switch {
	case f.Channel != "" && f.AppID != "":
		// The channel's index leads (CROSS JOIN keeps SQLite from reordering the tables).
		l.from = "hookd_message_channels c CROSS JOIN hookd_messages m ON m.id = c.message_id"
		l.key = "c.message_id"
		l.filter("c.app_id = ? AND c.channel = ?", f.AppID, f.Channel)
	case f.Channel != "":
		l.filter("EXISTS (SELECT 1 FROM json_each(m.channels) c WHERE c.value = ?)", f.Channel)
		l.equal("m.app_id", f.AppID)
	default:
		l.equal("m.app_id", f.AppID)
	}
	if types := unique(f.EventTypes); len(types) > 0 {
		conds := make([]condition, len(types))
		for i, et := range types {
			conds[i] = condition{sql: "m.event_type = ?", args: []any{et}}
		}
		l.anyOf(conds...)
	}
	if f.After != nil {
		l.fromTime = true
		l.filter("m.created_at >= ?", micros(*f.After))
	}
	if f.Before != nil {
		l.filter("m.created_at < ?", micros(*f.Before))
	}
	page, err := list(ctx, q.q, l, f.ListOptions, scanMessage, func(m *hookd.Message) string { return m.ID })
	if err != nil {
		return nil, fmt.Errorf("list messages of application %s: %w", f.AppID, err)
	}
	return page, nil
}

// InsertMessage writes msg unless the application already has a message with its event id; then
// it returns that message and inserted false. A missing application is hookd.ErrNotFound.
func (t *txn) InsertMessage(ctx context.Context, msg *hookd.Message) (*hookd.Message, bool, error) {
	channels, err := sqlcodec.EncodeStrings(msg.Channels)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	res, err := t.stmt(ctx, t.stmts.insertMessage).ExecContext(ctx, msg.ID, msg.AppID, sqlcodec.NullString(msg.EventID),
		msg.EventType, channels, rawJSON(msg.Payload), micros(msg.CreatedAt))
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
	}
	if n == 1 {
		if err := t.insertChannels(ctx, msg); err != nil {
			return nil, false, fmt.Errorf("insert message %s: %w", msg.ID, err)
		}
		return nil, true, nil
	}
	row := t.q.QueryRowContext(ctx, `SELECT `+messageCols+` FROM hookd_messages m
		WHERE m.app_id = ? AND m.event_id = ?`, msg.AppID, msg.EventID)
	existing, err := scanMessage(row)
	if err != nil {
		return nil, false, fmt.Errorf("insert message %s: read message with event id %s: %w", msg.ID, msg.EventID, classify(err))
	}
	return &existing, false, nil
}

func (t *txn) insertChannels(ctx context.Context, msg *hookd.Message) error {
	channels := unique(msg.Channels)
	if len(channels) == 0 {
		return nil
	}
	args := make([]any, 0, 3*len(channels))
	for _, ch := range channels {
		args = append(args, msg.AppID, ch, msg.ID)
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO hookd_message_channels (app_id, channel, message_id) VALUES `+
		valuesList(len(channels), 3), args...)
	if err != nil {
		return fmt.Errorf("insert channels: %w", classify(err))
	}
	return nil
}

// ExpungeMessagePayload sets the message's payload to NULL: it reads back as a nil Payload.
func (t *txn) ExpungeMessagePayload(ctx context.Context, messageID string) error {
	err := mustAffect(t.q.ExecContext(ctx, `UPDATE hookd_messages SET payload = NULL WHERE id = ?`, messageID))
	if err != nil {
		return fmt.Errorf("expunge payload of message %s: %w", messageID, err)
	}
	return nil
}

// placeholders returns "?, ?, ..." with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// unique returns v without repeats, in first-seen order.
func unique(v []string) []string {
	if len(v) < 2 {
		return v
	}
	seen := make(map[string]bool, len(v))
	out := make([]string, 0, len(v))
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
