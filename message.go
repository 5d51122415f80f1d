package hookd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Message is one event sent to one application.
type Message struct {
	ID        string // "msg_..."
	AppID     string
	EventID   string // the producer's idempotency id; optional, unique within the application
	EventType string
	Channels  []string
	// Tags are free-form labels the message list filters by (Svix's tags).
	Tags      []string
	Payload   json.RawMessage
	CreatedAt time.Time
	// PayloadExpiresAt is when the payload is deleted (Svix's payload retention); nil: kept until
	// it is expunged.
	PayloadExpiresAt *time.Time
}

// MessageIn is a message to send.
type MessageIn struct {
	// EventType names the event ("invoice.paid"). Required.
	EventType string
	// EventID is the producer's id for the event: a second Send with the same EventID to the same
	// application returns the first message and sends nothing. Optional; any printable text.
	EventID string
	// Channels limit the message to endpoints that subscribe to one of them. Optional.
	Channels []string
	// Payload is the message body, a JSON object: json.RawMessage or []byte holding one is used as
	// it is, byte for byte; any other value (a struct, a map) is encoded with encoding/json.
	// Anything that is not an object (42, "str", [1,2], null) is a *ValidationError naming
	// "payload", on Send, SendTx and SendToEndpoint alike, as the API refuses it with a 422:
	// Svix's SDKs read a payload as an object, and one message that is not makes their message
	// list fail for the whole application. Required.
	Payload any
	// Tags label the message for the message list's tag filter (Svix's tags): at most 5, each of
	// at most 128 bytes of printable text; repeats are dropped. Optional.
	Tags []string
	// PayloadRetention is how long the payload is kept (Svix's payload retention): past it, a
	// started Client's sweep deletes it and the message reads back as expunged. Zero: kept until
	// expunged.
	PayloadRetention time.Duration
}

// SendResult is what Send did.
type SendResult struct {
	Message *Message
	// Deliveries is the number of endpoints the message goes to (0 for a duplicate).
	Deliveries int
	// Duplicate is true when the application already had a message with this EventID: Message is
	// that first message, and nothing was written.
	Duplicate bool
}

// Send writes the message, one delivery per matching endpoint of the application (by id or uid),
// and one job per delivery, in one transaction (shared with concurrent Sends). It never waits on
// a customer's server.
//
// ctx bounds the wait to begin writing (behind concurrent Sends, and for the store's write
// connection): when it ends first, Send returns an error wrapping ErrWriterBusy and ctx's error,
// and nothing was written. Once the transaction has begun, it commits or rolls back whole, even
// if ctx ends meanwhile: the message is never half written. On SQLite, whose store writes through
// one connection, a Send while the app holds a transaction open on store.DB() waits for that
// transaction to end: send inside it with SendTx, or commit it first.
func (c *Client) Send(ctx context.Context, app string, msg *MessageIn) (*SendResult, error) {
	m, err := c.prepare(msg)
	if err != nil {
		return nil, err
	}
	return c.joinSendBatch(ctx, app, m)
}

// SendTx is Send inside the caller's own transaction (a *sql.Tx begun on the store's DB(), or
// what the store's WrapTx accepts): when the caller commits, the message, its deliveries and their
// jobs commit with the caller's own writes; when it rolls back, nothing is left. The caller
// commits; the deliveries start after the commit. A transaction the store cannot use (SQLite: one
// of another database) is ErrUnsupportedTx, and one already ended is sql.ErrTxDone.
func (c *Client) SendTx(ctx context.Context, tx any, app string, msg *MessageIn) (*SendResult, error) {
	m, err := c.prepare(msg)
	if err != nil {
		return nil, err
	}
	t, err := c.store.WrapTx(tx)
	if err != nil {
		return nil, fmt.Errorf("hookd: SendTx: %w", err)
	}
	var admitted bool
	return c.sendInTx(ctx, t, app, m, &admitted)
}

// SendToEndpoint writes a message for the application and one delivery of it to one endpoint
// alone, whatever the endpoint's event-type and channel filters say (Svix's send-example). A
// disabled endpoint is ErrEndpointDisabled. The message counts in the application's message rate
// (Config.MessageRatePerApp).
func (c *Client) SendToEndpoint(ctx context.Context, app, endpoint string, msg *MessageIn) (*Message, error) {
	m, err := c.prepare(msg)
	if err != nil {
		return nil, err
	}
	admitted := false
	err = c.inApp(ctx, app, func(tx Tx, a *Application) error {
		if !admitted {
			if err := c.rates.take(a.ID); err != nil {
				return err
			}
			admitted = true
		}
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		if ep.Disabled {
			return fmt.Errorf("%w: enable endpoint %s first", ErrEndpointDisabled, ep.ID)
		}
		m.AppID = a.ID
		existing, inserted, err := tx.InsertMessage(ctx, m)
		if err != nil {
			return err
		}
		if !inserted {
			m = existing
			return nil
		}
		d := Delivery{
			ID: c.newID(prefixDelivery), MessageID: m.ID, EndpointID: ep.ID, AppID: a.ID,
			Status: DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt,
		}
		if err := tx.InsertDeliveries(ctx, []Delivery{d}); err != nil {
			return err
		}
		c.noteUnworked(d.ID)
		return c.queue.EnqueueTx(ctx, tx, []Job{{DeliveryID: d.ID, Attempt: 1, Trigger: TriggerScheduled}})
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: send to endpoint %q: %w", endpoint, err)
	}
	return m, nil
}

// prepare validates msg and returns the message to write (without its app).
func (c *Client) prepare(msg *MessageIn) (*Message, error) {
	if msg == nil {
		return nil, invalid("message", "is nil")
	}
	if err := CheckEventTypeName("eventType", msg.EventType); err != nil {
		return nil, err
	}
	if msg.EventID != "" {
		if err := checkName("eventId", msg.EventID, maxIDLen); err != nil {
			return nil, err
		}
	}
	if len(msg.Channels) > maxChannels {
		return nil, invalid("channels", fmt.Sprintf("%d channels, at most %d", len(msg.Channels), maxChannels))
	}
	for _, ch := range msg.Channels {
		if err := checkName("channels", ch, maxChannelLen); err != nil {
			return nil, err
		}
	}
	tags, err := checkTags(msg.Tags)
	if err != nil {
		return nil, err
	}
	if msg.PayloadRetention < 0 {
		return nil, invalid("payloadRetention", "is negative")
	}
	payload, err := encodePayload(msg.Payload)
	if err != nil {
		return nil, err
	}
	if len(payload) > c.cfg.MaxPayload {
		return nil, &ValidationError{Field: "payload", Reason: fmt.Sprintf("%d bytes, at most %d", len(payload), c.cfg.MaxPayload), kind: ErrPayloadTooLarge}
	}
	id, now := c.newIDAt(prefixMessage) // a list by time is bounded by ids (id_bound.go)
	m := &Message{
		ID:        id,
		EventID:   msg.EventID,
		EventType: msg.EventType,
		Channels:  slices.Clone(msg.Channels),
		Tags:      tags,
		Payload:   payload,
		CreatedAt: now,
	}
	if msg.PayloadRetention > 0 {
		exp := m.CreatedAt.Add(msg.PayloadRetention)
		m.PayloadExpiresAt = &exp
	}
	return m, nil
}

// checkTags returns tags without repeats, or the first reason they are refused.
func checkTags(tags []string) ([]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	seen := make(map[string]bool, len(tags))
	var out []string
	for _, tag := range tags {
		if err := checkName("tags", tag, maxTagLen); err != nil {
			return nil, err
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
		if len(out) > maxTags {
			return nil, invalid("tags", fmt.Sprintf("more than %d tags", maxTags))
		}
	}
	return out, nil
}

// encodePayload returns the payload's JSON, which must be an object (MessageIn.Payload). Raw JSON
// is checked, not rewritten, so the bytes a receiver gets are the bytes the producer gave.
func encodePayload(p any) (json.RawMessage, error) {
	var raw []byte
	switch v := p.(type) {
	case nil:
		return nil, invalid("payload", "is required")
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, invalid("payload", "cannot be encoded as JSON: "+err.Error())
		}
		raw = b
	}
	if !json.Valid(raw) {
		return nil, invalid("payload", "is not valid JSON")
	}
	if v := bytes.TrimLeft(raw, " \t\r\n"); v[0] != '{' {
		return nil, invalid("payload", "must be a JSON object, not "+jsonKind(v[0]))
	}
	return slices.Clone(json.RawMessage(raw)), nil
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// GetMessage returns a message of an application by id or event id.
func (c *Client) GetMessage(ctx context.Context, app, msg string) (*Message, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	m, err := c.store.GetMessage(ctx, a.ID, msg)
	if err != nil {
		return nil, fmt.Errorf("hookd: get message %q: %w", msg, err)
	}
	return m, nil
}

// GetMessages returns the messages of an application with ids (message ids, not event ids) that
// exist, by id. On a store that reads them in one statement (both of this module's do) it is one
// read; otherwise one GetMessage a message.
func (c *Client) GetMessages(ctx context.Context, app string, ids []string) (map[string]Message, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	return c.messagesByID(ctx, a.ID, ids)
}

// messagesByID returns the messages of the application appID (an id) with ids that exist, by
// id: one read on a MessageBatchReader, one GetMessage a message otherwise.
func (c *Client) messagesByID(ctx context.Context, appID string, ids []string) (map[string]Message, error) {
	if br, ok := c.store.(MessageBatchReader); ok {
		out, err := br.GetMessagesByID(ctx, appID, ids)
		if err != nil {
			return nil, fmt.Errorf("hookd: get messages: %w", err)
		}
		return out, nil
	}
	out := make(map[string]Message)
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue // several deliveries of one message
		}
		m, err := c.store.GetMessage(ctx, appID, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("hookd: get message %q: %w", id, err)
		}
		if m.ID == id { // not a message whose event id is id
			out[id] = *m
		}
	}
	return out, nil
}

// ListMessages lists an application's messages, newest first. f.AppID is set from app.
func (c *Client) ListMessages(ctx context.Context, app string, f MessageFilter) (*Page[Message], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	f.FromID, f.BeforeID = c.idBounds(prefixMessage, f.After, f.Before)
	return c.store.ListMessages(ctx, f)
}

// ExpungeMessageContent deletes the payload of a message of an application (by id or event id),
// as Svix's expunge content does: the message then reads back with a nil Payload and should not be
// resent.
func (c *Client) ExpungeMessageContent(ctx context.Context, app, msg string) error {
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		m, err := tx.GetMessage(ctx, a.ID, msg)
		if err != nil {
			return err
		}
		return tx.ExpungeMessagePayload(ctx, m.ID)
	})
	if err != nil {
		return fmt.Errorf("hookd: expunge content of message %q: %w", msg, err)
	}
	return nil
}
