package hookd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on the strings of a message.
const (
	maxIDLen       = 256 // uid, eventId, event type names
	maxChannels    = 10
	maxChannelLen  = 128
	maxNameLen     = 256
	maxDescription = 4096
	maxTags        = 5 // Svix's
	maxTagLen      = 128
)

// MessageIn is a message to send.
type MessageIn struct {
	// EventType names the event ("invoice.paid"). Required.
	EventType string
	// EventID is the producer's id for the event: a second Send with the same EventID to the same
	// application returns the first message and sends nothing. Optional; any printable text.
	EventID string
	// Channels limit the message to endpoints that subscribe to one of them. Optional.
	Channels []string
	// Payload is the message body: json.RawMessage or []byte holding a JSON object is used as it
	// is; any other value is encoded with encoding/json. Required.
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
func (c *Client) Send(ctx context.Context, app string, msg *MessageIn) (*SendResult, error) {
	m, err := c.prepare(msg)
	if err != nil {
		return nil, err
	}
	return c.sendBatched(ctx, app, m)
}

// SendTx is Send inside the caller's own transaction (a *sql.Tx from the store's database, or
// what the store's WrapTx accepts): when the caller commits, the message, its deliveries and their
// jobs commit with the caller's own writes; when it rolls back, nothing is left. The caller
// commits; the deliveries start after the commit.
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
	return c.sendIn(ctx, t, app, m, &admitted)
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
	m := &Message{
		ID:        newID(prefixMessage),
		EventID:   msg.EventID,
		EventType: msg.EventType,
		Channels:  slices.Clone(msg.Channels),
		Tags:      tags,
		Payload:   payload,
		CreatedAt: c.now(),
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

// encodePayload returns the payload's JSON. Raw JSON is checked, not rewritten, so the bytes a
// receiver gets are the bytes the producer gave.
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
	return slices.Clone(json.RawMessage(raw)), nil
}

// sendIn writes m for app inside tx, with its jobs (admitted: see writeMessage).
func (c *Client) sendIn(ctx context.Context, tx Tx, app string, m *Message, admitted *bool) (*SendResult, error) {
	w := newSendWrite(tx)
	res, err := c.writeMessage(ctx, w, app, m, admitted)
	if err != nil {
		return nil, err
	}
	if err := c.finishSends(ctx, w); err != nil {
		return nil, err
	}
	return res, nil
}

// sendWrite is what the sends of one transaction write together: each application and its
// enabled endpoints are read once, and the deliveries and jobs of every message are inserted at
// the end in one statement each (finishSends).
type sendWrite struct {
	tx         Tx
	apps       map[string]*Application // by the id or uid the sends named
	endpoints  map[string][]Endpoint   // enabled endpoints by application id
	deliveries []Delivery
	jobs       []Job
}

func newSendWrite(tx Tx) *sendWrite {
	return &sendWrite{tx: tx, apps: map[string]*Application{}, endpoints: map[string][]Endpoint{}}
}

// finishSends inserts the deliveries of w's messages and enqueues their jobs.
func (c *Client) finishSends(ctx context.Context, w *sendWrite) error {
	if len(w.deliveries) > 0 {
		if err := w.tx.InsertDeliveries(ctx, w.deliveries); err != nil {
			return fmt.Errorf("hookd: send: %w", err)
		}
	}
	return c.enqueue(ctx, w.tx, w.jobs)
}

// enqueue inserts the jobs of sends in tx.
func (c *Client) enqueue(ctx context.Context, tx Tx, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if err := c.queue.EnqueueTx(ctx, tx, jobs); err != nil {
		return fmt.Errorf("hookd: send: enqueue: %w", err)
	}
	return nil
}

// writeMessage writes m for app in w's transaction and adds its deliveries and their jobs to w,
// for finishSends to insert with those of the other sends. Unless *admitted, the message first
// takes its place in the application's message rate (a *RateLimitError, before any write, when
// there is none), and *admitted is set.
func (c *Client) writeMessage(ctx context.Context, w *sendWrite, app string, m *Message, admitted *bool) (*SendResult, error) {
	a := w.apps[app]
	if a == nil {
		var err error
		if a, err = w.tx.GetApplication(ctx, app); err != nil {
			return nil, fmt.Errorf("hookd: send to application %q: %w", app, err)
		}
		w.apps[app] = a
	}
	if !*admitted {
		if err := c.rates.take(a.ID); err != nil {
			return nil, fmt.Errorf("hookd: send to application %q: %w", app, err)
		}
		*admitted = true
	}
	m.AppID = a.ID
	existing, inserted, err := w.tx.InsertMessage(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("hookd: send: %w", err)
	}
	if !inserted {
		return &SendResult{Message: existing, Duplicate: true}, nil
	}
	eps, ok := w.endpoints[a.ID]
	if !ok {
		if eps, err = w.tx.EnabledEndpoints(ctx, a.ID); err != nil {
			return nil, fmt.Errorf("hookd: send: %w", err)
		}
		w.endpoints[a.ID] = eps
	}
	n := 0
	for i := range eps {
		if !matches(&eps[i], m.EventType, m.Channels) {
			continue
		}
		d := Delivery{
			ID: newID(prefixDelivery), MessageID: m.ID, EndpointID: eps[i].ID, AppID: a.ID,
			Status: DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt,
		}
		w.deliveries = append(w.deliveries, d)
		w.jobs = append(w.jobs, Job{DeliveryID: d.ID, Attempt: 1, Trigger: TriggerScheduled})
		n++
	}
	return &SendResult{Message: m, Deliveries: n}, nil
}

// matches reports whether an enabled endpoint takes a message, as Svix filters: the endpoint's
// event types list the message's (or the endpoint lists none), and when the endpoint names
// channels, the message names one of them.
func matches(ep *Endpoint, eventType string, channels []string) bool {
	if len(ep.EventTypes) > 0 && !slices.Contains(ep.EventTypes, eventType) {
		return false
	}
	if len(ep.Channels) > 0 {
		for _, ch := range channels {
			if slices.Contains(ep.Channels, ch) {
				return true
			}
		}
		return false
	}
	return true
}

// Bounds of free text and metadata.
const (
	maxMetadata         = 64   // entries
	maxMetadataKeyLen   = 256  // bytes
	maxMetadataValueLen = 4096 // bytes
)

// checkText accepts UTF-8 text of at most max bytes without NUL characters: free text such as a
// description, where newlines and tabs are fine. (PostgreSQL's text cannot hold NUL, so refusing
// it here keeps every store alike.)
func checkText(field, s string, max int) error {
	switch {
	case len(s) > max:
		return invalid(field, fmt.Sprintf("is %d bytes, at most %d", len(s), max))
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	case strings.IndexByte(s, 0) >= 0:
		return invalid(field, "contains a NUL character (U+0000)")
	}
	return nil
}

// checkMetadata accepts at most maxMetadata entries of non-empty keys and values that pass
// checkText.
func checkMetadata(m map[string]string) error {
	if len(m) > maxMetadata {
		return invalid("metadata", fmt.Sprintf("has %d entries, at most %d", len(m), maxMetadata))
	}
	for k, v := range m {
		if k == "" {
			return invalid("metadata", "has an empty key")
		}
		if err := checkText("metadata", k, maxMetadataKeyLen); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if err := checkText("metadata", v, maxMetadataValueLen); err != nil {
			return fmt.Errorf("value of %q: %w", k, err)
		}
	}
	return nil
}

// checkName accepts non-empty printable text of at most max bytes.
func checkName(field, s string, max int) error {
	switch {
	case s == "":
		return invalid(field, "is required")
	case len(s) > max:
		return invalid(field, fmt.Sprintf("is %d bytes, at most %d", len(s), max))
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return invalid(field, fmt.Sprintf("contains the unprintable character %U", r))
		}
	}
	return nil
}
