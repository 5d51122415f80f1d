package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

const messageCols = `m.id, m.app_id, m.event_id, m.event_type, m.channels::text, m.payload, m.created_at,
	m.tags::text, m.payload_expires_at`

// InsertMessage writes msg unless the application already has a message with its event id; then
// it returns that message and inserted false. A missing application is hookd.ErrNotFound; a
// message id taken, hookd.ErrConflict. It is InsertMessages with one message.
//
// Of two transactions inserting one event id at once, the second waits on the unique index for
// the first to commit, inserts nothing, and reads the first's message (READ COMMITTED: each
// statement sees what committed before it began).
func (t *txn) InsertMessage(ctx context.Context, msg *hookd.Message) (*hookd.Message, bool, error) {
	existing, err := t.InsertMessages(ctx, []*hookd.Message{msg})
	if err != nil {
		return nil, false, err
	}
	return existing[0], existing[0] == nil, nil
}

// The statements of InsertMessages. insertMessagesSQL returns the ids of the messages it
// wrote; existingMessagesSQL reads, in a statement of its own (so that under READ COMMITTED it
// sees what a concurrent transaction committed while this one waited on the event id index),
// the messages whose event ids the others found taken, each looked up on its own (LATERAL, and
// LIMIT 1 keeps the planner from flattening it into a join it may hash) in the index of event
// ids.
const (
	insertMessagesSQL = `INSERT INTO hookd_messages (id, app_id, event_id, event_type, channels, payload, created_at,
			tags, payload_expires_at)
		SELECT m.id, m.app_id, m.event_id, m.event_type, m.channels::jsonb, m.payload, m.created_at, m.tags::jsonb,
			m.payload_expires_at
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::timestamptz[],
			$8::text[], $9::timestamptz[])
			AS m (id, app_id, event_id, event_type, channels, payload, created_at, tags, payload_expires_at)
		ON CONFLICT (app_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
		RETURNING id`
	existingMessagesSQL = `SELECT ` + messageCols + `
		FROM unnest($1::text[], $2::text[]) AS k (app_id, event_id)
		CROSS JOIN LATERAL (SELECT * FROM hookd_messages m
			WHERE m.app_id = k.app_id AND m.event_id = k.event_id AND m.event_id IS NOT NULL LIMIT 1) AS m`
	insertChannelsSQL = `INSERT INTO hookd_message_channels (app_id, channel, message_id)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`
	insertTagsSQL = `INSERT INTO hookd_message_tags (app_id, tag, message_id)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`
)

// InsertMessages writes msgs in one statement, as InsertMessage writes each in turn: a message
// whose application has its event id already, from a message committed or from one earlier in
// msgs, is not written and existing[i] is that first message (read back in a second statement,
// only when there is one). The channels and tags of the messages written go in one statement each,
// held for the commit in InTx's transaction. Rows go in in the order of their application and
// event id, so that two batches that share event ids wait on each other in the same order, not
// in a cycle.
func (t *txn) InsertMessages(ctx context.Context, msgs []*hookd.Message) ([]*hookd.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(msgs[a].AppID, msgs[b].AppID), strings.Compare(msgs[a].EventID, msgs[b].EventID))
	})
	n := len(msgs)
	var (
		ids, appIDs, eventTypes = make([]string, n), make([]string, n), make([]string, n)
		eventIDs, channels      = make([]*string, n), make([]*string, n)
		tags                    = make([]*string, n)
		payloads                = make([][]byte, n)
		createdAts              = make([]time.Time, n)
		expiresAts              = make([]*time.Time, n)
	)
	for row, i := range order {
		m := msgs[i]
		ch, err := encodeList(m.Channels)
		if err != nil {
			return nil, fmt.Errorf("insert message %s: %w", m.ID, err)
		}
		tg, err := encodeList(m.Tags)
		if err != nil {
			return nil, fmt.Errorf("insert message %s: %w", m.ID, err)
		}
		ids[row], appIDs[row], eventTypes[row], channels[row], tags[row] = m.ID, m.AppID, m.EventType, ch, tg
		if m.EventID != "" {
			eventIDs[row] = &m.EventID
		}
		payloads[row], createdAts[row], expiresAts[row] = m.Payload, m.CreatedAt, m.PayloadExpiresAt
	}
	written := make(map[string]bool, n)
	err := eachRow(ctx, t.c, batchQuery{sql: insertMessagesSQL,
		args: []any{ids, appIDs, eventIDs, eventTypes, channels, payloads, createdAts, tags, expiresAts},
		each: func(r row) error {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			written[id] = true
			return nil
		}})
	if err != nil {
		return nil, fmt.Errorf("insert messages %s..%s: %w", ids[0], ids[n-1], classify(err))
	}
	existing := make([]*hookd.Message, n)
	if len(written) < n {
		if err := t.readExisting(ctx, msgs, written, existing); err != nil {
			return nil, err
		}
	}
	var labels [2]struct{ apps, labels, ids []string }
	for _, m := range msgs {
		if !written[m.ID] {
			continue
		}
		for k, list := range [2][]string{m.Channels, m.Tags} {
			for _, l := range sqlstore.Unique(list) {
				labels[k].apps, labels[k].labels, labels[k].ids = append(labels[k].apps, m.AppID), append(labels[k].labels, l), append(labels[k].ids, m.ID)
			}
		}
	}
	for k, query := range [2]string{insertChannelsSQL, insertTagsSQL} {
		if len(labels[k].ids) == 0 {
			continue
		}
		if t.pipe != nil {
			t.pipe.hold(query, labels[k].apps, labels[k].labels, labels[k].ids)
			continue
		}
		if _, err := t.c.exec(ctx, query, labels[k].apps, labels[k].labels, labels[k].ids); err != nil {
			return nil, fmt.Errorf("insert messages %s..%s: labels: %w", ids[0], ids[n-1], classify(err))
		}
	}
	return existing, nil
}

// readExisting sets existing[i] to the message with the application and event id of msgs[i], for
// every message of msgs not written.
func (t *txn) readExisting(ctx context.Context, msgs []*hookd.Message, written map[string]bool, existing []*hookd.Message) error {
	var appIDs, eventIDs []string
	for _, m := range msgs {
		if !written[m.ID] {
			appIDs, eventIDs = append(appIDs, m.AppID), append(eventIDs, m.EventID)
		}
	}
	found := map[[2]string]*hookd.Message{}
	err := eachRow(ctx, t.c, batchQuery{sql: existingMessagesSQL, args: []any{appIDs, eventIDs}, each: func(r row) error {
		m, err := dialect.ScanMessage(r)
		if err != nil {
			return err
		}
		found[[2]string{m.AppID, m.EventID}] = &m
		return nil
	}})
	if err != nil {
		return fmt.Errorf("insert messages: read messages with their event ids: %w", classify(err))
	}
	for i, m := range msgs {
		if written[m.ID] {
			continue
		}
		if existing[i] = found[[2]string{m.AppID, m.EventID}]; existing[i] == nil {
			return fmt.Errorf("insert message %s: read message with event id %s: %w", m.ID, m.EventID, hookd.ErrNotFound)
		}
	}
	return nil
}

// encodeList returns list as JSON text, or nil (NULL) when it is empty.
func encodeList(list []string) (*string, error) {
	v, err := sqlcodec.EncodeStrings(list)
	if v == nil || err != nil {
		return nil, err
	}
	s := v.(string)
	return &s, nil
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

// TypeOldAttempts gives at most limit attempts recorded before migration 17, whose event_type
// is NULL, their message's event type (an empty one for an attempt whose message is gone, so that none is
// picked again), reading them through the NULL range of hookd_attempts_endpoint_event_type;
// rows another process is typing are skipped.
func (s *Store) TypeOldAttempts(ctx context.Context, limit int) (int, error) {
	n, err := s.c.exec(ctx, `UPDATE hookd_attempts a
		SET event_type = COALESCE((SELECT m.event_type FROM hookd_messages m WHERE m.id = a.message_id), '')
		WHERE a.id = ANY (ARRAY (SELECT id FROM hookd_attempts WHERE event_type IS NULL
			LIMIT $1 FOR UPDATE SKIP LOCKED))`, limit)
	if err != nil {
		return 0, fmt.Errorf("type old attempts: %w", classify(err))
	}
	return int(n), nil
}
