package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hookd/hookd"
)

// EventMap maps internal event names to the public event types customers subscribe to. Internal
// names are the app's own; the public names are the contract. Exposing a new public webhook is
// one line:
//
//	bus.EventMap{
//		"tenancy.invitation.created":   "invitation.created",
//		"billing.subscription.updated": "subscription.updated",
//	}
type EventMap map[string]string

// Public returns the public name of an internal one, and whether it has one.
func (m EventMap) Public(internal string) (string, bool) {
	p, ok := m[internal]
	return p, ok && p != ""
}

// WebhookOptions configures SubscribeWebhooks. A nil *WebhookOptions means every default.
type WebhookOptions struct {
	// ApplicationFunc returns the hookd application (its uid or id) an event is sent to, or ""
	// for an event that concerns no customer, which is skipped. An error fails the attempt, and
	// the bus retries it. Default: the application whose uid is the payload's organization
	// (Organization).
	ApplicationFunc func(ctx context.Context, d *Dispatch) (string, error)
}

// Webhooks is the webhook fan-out SubscribeWebhooks made. It counts the events it handled; the
// counts are safe to read at any time.
type Webhooks struct {
	client *hookd.Client
	appOf  func(ctx context.Context, d *Dispatch) (string, error)
	log    *slog.Logger

	sent, noApp, unknownApp, refused atomic.Int64
	logged                           sync.Map // skipReason + "\x00" + event name -> true, once logged
}

// WebhookCounts are the events a fan-out handled since it was made: sent, or skipped for one of
// three causes. A skipped event is settled, not retried: retrying would not help.
type WebhookCounts struct {
	Sent int64 // written as a hookd message (a second dispatch of an event sent already included)
	// NoApplication: ApplicationFunc named none (by default: the payload names no organization).
	NoApplication int64
	// UnknownApplication: the application named does not exist in hookd.
	UnknownApplication int64
	// Refused: hookd refused the message (a *hookd.ValidationError: a payload that is not a JSON
	// object, one over the size limit, a public name that is not a valid event type name).
	Refused int64
}

// Skipped is the events skipped, whatever the cause.
func (c WebhookCounts) Skipped() int64 { return c.NoApplication + c.UnknownApplication + c.Refused }

// Counts returns what the fan-out handled so far.
func (w *Webhooks) Counts() WebhookCounts {
	return WebhookCounts{Sent: w.sent.Load(), NoApplication: w.noApp.Load(),
		UnknownApplication: w.unknownApp.Load(), Refused: w.refused.Load()}
}

// SubscribeWebhooks makes the client's webhooks one subscriber of the bus: each event whose name m
// maps becomes a hookd message of its public type, sent to the application opts.ApplicationFunc
// names (by default the one whose uid, or id, is the payload's "organizationId", or else its
// "orgId"). The message's payload is the event's, and its event id is the event's, so an event
// dispatched again sends nothing twice.
//
// An event for no application (user.registered, whose payload names no organization), for an
// application hookd does not have, or that hookd refuses (a payload that is not a JSON object) is
// skipped, not failed: retrying would not help. Each is counted (Webhooks.Counts), and the bus's
// logger gets a warning the first time an event name is skipped for a cause, not one a skip. A
// failure to write the message (the database), or an error from ApplicationFunc, fails the
// attempt, and the bus retries it. Either way the business write that published the event was
// committed before, and nothing here reaches it.
func SubscribeWebhooks(b *Bus, c *hookd.Client, m EventMap, opts *WebhookOptions) *Webhooks {
	w := &Webhooks{client: c, appOf: organizationApp, log: b.cfg.Logger}
	if opts != nil && opts.ApplicationFunc != nil {
		w.appOf = opts.ApplicationFunc
	}
	names := make([]string, 0, len(m))
	for internal := range m {
		names = append(names, internal)
	}
	sort.Strings(names)
	for _, internal := range names {
		public, ok := m.Public(internal)
		if !ok {
			continue
		}
		b.Subscribe(internal, func(ctx context.Context, d *Dispatch) error {
			return w.fanOut(ctx, public, d)
		})
	}
	return w
}

// organizationApp is WebhookOptions.ApplicationFunc's default: the payload's organization.
func organizationApp(_ context.Context, d *Dispatch) (string, error) {
	return Organization(d.Payload), nil
}

// Organization returns the organization an event's payload names: its "organizationId", or else
// its "orgId", when that is a non-empty string.
func Organization(payload json.RawMessage) string {
	var p struct {
		OrganizationID any `json:"organizationId"`
		OrgID          any `json:"orgId"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	for _, v := range []any{p.OrganizationID, p.OrgID} {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// The causes of a skip, as the log line names them.
const (
	skipNoApp      = "no application"
	skipUnknownApp = "unknown application"
	skipRefused    = "refused by hookd"
)

func (w *Webhooks) fanOut(ctx context.Context, public string, d *Dispatch) error {
	app, err := w.appOf(ctx, d)
	if err != nil {
		return fmt.Errorf("bus: the application of event %s: %w", d.ID, err)
	}
	if app == "" {
		w.noApp.Add(1)
		w.skipped(ctx, skipNoApp, public, d, "", nil)
		return nil
	}
	_, err = w.client.Send(ctx, app, &hookd.MessageIn{EventType: public, EventID: d.ID, Payload: d.Payload})
	var ve *hookd.ValidationError
	switch {
	case err == nil:
		w.sent.Add(1)
		return nil
	case errors.Is(err, hookd.ErrNotFound):
		w.unknownApp.Add(1)
		w.skipped(ctx, skipUnknownApp, public, d, app, err)
		return nil
	case errors.As(err, &ve):
		w.refused.Add(1)
		w.skipped(ctx, skipRefused, public, d, app, err)
		return nil
	}
	return err
}

// skipped logs the first skip of an event name for a cause; later ones are only counted.
func (w *Webhooks) skipped(ctx context.Context, cause, public string, d *Dispatch, app string, err error) {
	if _, seen := w.logged.LoadOrStore(cause+"\x00"+d.Name, true); seen {
		return
	}
	attrs := []slog.Attr{slog.String("cause", cause), slog.String("name", d.Name), slog.String("type", public),
		slog.String("event", d.ID)}
	if app != "" {
		attrs = append(attrs, slog.String("application", app))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	w.log.LogAttrs(ctx, slog.LevelWarn, "hookd bus: webhook skipped; further events of this name skipped for this cause are only counted (Webhooks.Counts)", attrs...)
}
