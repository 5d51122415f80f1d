package bus

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"

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

// SubscribeWebhooks makes the client's webhooks one subscriber of the bus: each event whose name m
// maps becomes a hookd message of its public type, sent to the application whose uid (or id) is
// the payload's "organizationId", or else its "orgId". The message's payload is the event's, and
// its event id is the event's, so an event dispatched again sends nothing twice.
//
// An event that names no organization (user.registered) is skipped, not failed; so is one for an
// application hookd does not have, or one hookd refuses (a payload that is not a JSON object),
// with a warning in the log: retrying would not help. A failure to write the message (the
// database) fails the attempt, and the bus retries it. Either way the business write that
// published the event was committed before, and nothing here reaches it.
func SubscribeWebhooks(b *Bus, c *hookd.Client, m EventMap) {
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
			return fanOut(ctx, b.cfg.Logger, c, public, d)
		})
	}
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

func fanOut(ctx context.Context, log *slog.Logger, c *hookd.Client, public string, d *Dispatch) error {
	org := Organization(d.Payload)
	if org == "" {
		return nil // not scoped to an organization: no customer to notify
	}
	_, err := c.Send(ctx, org, &hookd.MessageIn{EventType: public, EventID: d.ID, Payload: d.Payload})
	var ve *hookd.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, hookd.ErrNotFound), errors.As(err, &ve):
		log.LogAttrs(ctx, slog.LevelWarn, "hookd bus: webhook skipped", slog.String("event", d.ID),
			slog.String("name", d.Name), slog.String("type", public), slog.String("organization", org), slog.String("error", err.Error()))
		return nil
	}
	return err
}
