package hookd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookd/hookd/signature"
)

// The operator's own application and endpoint, which carry operational webhooks. They are an
// ordinary application (listed with the others) so the operator's webhooks are signed, retried and
// logged like any customer's.
const (
	OperationalAppUID      = "hookd-operational"
	OperationalEndpointUID = "operator"
)

// ensureOperational creates or updates the operator's application and endpoint from the config,
// and returns the application's id. With no OperationalWebhookURL it does nothing.
func (c *Client) ensureOperational(ctx context.Context) (string, error) {
	url := c.cfg.OperationalWebhookURL
	if url == "" {
		return "", nil
	}
	in := &EndpointIn{URL: url, UID: OperationalEndpointUID, Description: "hookd operational webhooks", Secret: c.cfg.OperationalWebhookSecret}
	if err := in.check(); err != nil {
		return "", fmt.Errorf("hookd: Config.OperationalWebhookURL/Secret: %w", err)
	}
	now := c.now()
	var appID string
	err := c.store.InTx(ctx, func(tx Tx) error {
		app, err := tx.GetApplication(ctx, OperationalAppUID)
		if errors.Is(err, ErrNotFound) {
			app = &Application{ID: c.newID(prefixApp), UID: OperationalAppUID, Name: "hookd operational webhooks", CreatedAt: now, UpdatedAt: now}
			err = tx.InsertApplication(ctx, app)
		}
		if err != nil {
			return err
		}
		appID = app.ID
		ep, err := tx.GetEndpoint(ctx, app.ID, OperationalEndpointUID)
		if errors.Is(err, ErrNotFound) {
			ep = &Endpoint{ID: c.newID(prefixEndpoint), AppID: app.ID, CreatedAt: now, UpdatedAt: now}
			in.apply(ep)
			secret := in.Secret
			if secret == "" {
				secret = signature.NewSecret()
			}
			return tx.InsertEndpoint(ctx, c.box.sealedEndpoint(ep), SigningKey{Secret: c.box.seal(ep.ID, secret), CreatedAt: now})
		}
		if err != nil {
			return err
		}
		if ep.URL != url {
			ep.URL, ep.UpdatedAt = url, now
			if err := tx.UpdateEndpoint(ctx, c.box.sealedEndpoint(ep)); err != nil {
				return err
			}
		}
		if in.Secret != "" {
			keys, err := tx.SigningKeys(ctx, ep.ID)
			if err != nil {
				return err
			}
			current := ""
			if len(keys) > 0 {
				current, _ = c.box.open(ep.ID, keys[0].Secret) // unreadable: replaced below
			}
			if current != in.Secret {
				return tx.AddSigningKey(ctx, ep.ID, SigningKey{Secret: c.box.seal(ep.ID, in.Secret), CreatedAt: now}, now)
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hookd: set up the operational webhook endpoint: %w", err)
	}
	return appID, nil
}

// emitOps records operational events in tx and, when operational webhooks are configured, sends
// each as a message to the operator's endpoint in the same transaction. Events about the operator's
// own application are recorded but not sent, so a failing operator endpoint does not feed itself.
func (c *Client) emitOps(ctx context.Context, tx Tx, evs []OperationalEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if err := tx.InsertOperationalEvents(ctx, evs); err != nil {
		return err
	}
	opsApp, _ := c.opsApp.Load().(string)
	if opsApp == "" {
		return nil
	}
	for _, ev := range evs {
		if ev.AppID == opsApp {
			continue
		}
		payload, err := json.Marshal(operationalPayload(ev))
		if err != nil {
			return err
		}
		m := &Message{ID: c.newID(prefixMessage), EventID: ev.ID, EventType: ev.Type, Payload: payload, CreatedAt: c.now()}
		exempt := true // the operator's own events are outside the tenants' message rate
		if _, err := c.sendInTx(ctx, tx, opsApp, m, &exempt); err != nil {
			return fmt.Errorf("send operational webhook %s: %w", ev.Type, err)
		}
	}
	return nil
}

// operationalPayload is an operational webhook's body, in Svix's envelope: type, timestamp, data.
func operationalPayload(ev OperationalEvent) map[string]any {
	data := map[string]any{"appId": ev.AppID, "endpointId": ev.EndpointID}
	if ev.MessageID != "" {
		data["msgId"] = ev.MessageID
	}
	if ev.Reason != "" {
		data["reason"] = ev.Reason
	}
	return map[string]any{"type": ev.Type, "timestamp": ev.At.UTC().Format(time.RFC3339Nano), "data": data}
}

// endpointOp is an operational event about an endpoint, caused by the operator.
func (c *Client) endpointOp(typ string, ep *Endpoint, reason string) OperationalEvent {
	return OperationalEvent{ID: c.newID(prefixEvent), Type: typ, AppID: ep.AppID, EndpointID: ep.ID, Reason: reason, At: c.now()}
}

// OperationalEvent is something an operator is told about (as Svix's operational webhooks):
// an endpoint disabled, a delivery exhausted.
type OperationalEvent struct {
	ID         string // "evt_..."
	Type       string // "endpoint.disabled", "message.attempt.exhausted", ...
	AppID      string
	EndpointID string
	MessageID  string
	Reason     string
	At         time.Time
}

// Operational event types.
const (
	OpEndpointDisabled        = "endpoint.disabled"
	OpMessageAttemptExhausted = "message.attempt.exhausted"
	OpMessageAttemptFailing   = "message.attempt.failing"
	OpMessageAttemptRecovered = "message.attempt.recovered"
	OpEndpointCreated         = "endpoint.created"
	OpEndpointUpdated         = "endpoint.updated"
	OpEndpointDeleted         = "endpoint.deleted"
)

// ListOperationalEvents lists operational events, oldest first.
func (c *Client) ListOperationalEvents(ctx context.Context, opts ListOptions) (*Page[OperationalEvent], error) {
	return c.store.ListOperationalEvents(ctx, opts)
}
