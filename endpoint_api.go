package hookd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hookd/hookd/signature"
)

// What the HTTP API (package server) needs of endpoints beyond the rest of the Client.

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
			ID: newID(prefixDelivery), MessageID: m.ID, EndpointID: ep.ID, AppID: a.ID,
			Status: DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt,
		}
		if err := tx.InsertDeliveries(ctx, []Delivery{d}); err != nil {
			return err
		}
		return c.queue.EnqueueTx(ctx, tx, []Job{{DeliveryID: d.ID, Attempt: 1, Trigger: TriggerScheduled}})
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: send to endpoint %q: %w", endpoint, err)
	}
	return m, nil
}

// RecoverRange is Recover for the failed deliveries created at or after since and, when until is
// set, before until. It queues at most MaxRecover attempts, a page of deliveries a transaction.
func (c *Client) RecoverRange(ctx context.Context, app, endpoint string, since time.Time, until *time.Time) (int, error) {
	ep, err := c.recoverTarget(ctx, app, endpoint)
	if err != nil {
		return 0, err
	}
	return c.recoverPages(ctx, ep, since, until)
}

// RotateSecretGrace is RotateSecret with the old keys signing for grace instead of
// Config.RotationGrace (zero: they stop at once, so the new secret replaces them).
func (c *Client) RotateSecretGrace(ctx context.Context, app, endpoint, secret string, grace time.Duration) (string, error) {
	if grace < 0 {
		return "", invalid("gracePeriodSeconds", "must be zero or positive")
	}
	var id string
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		if secret == "" {
			secret = signature.NewSecret()
		} else if err := CheckSecret(secret, ep.Scheme); err != nil {
			return err
		}
		id = ep.ID
		now := c.now()
		return tx.AddSigningKey(ctx, ep.ID, SigningKey{Secret: c.box.seal(ep.ID, secret), CreatedAt: now}, now.Add(grace))
	})
	if err != nil {
		return "", fmt.Errorf("hookd: rotate secret of %q: %w", endpoint, err)
	}
	c.states.invalidate(id)
	return secret, nil
}

// EditEndpoint changes an endpoint's configuration in one transaction: edit gets the current
// configuration (Disabled included, Secret empty) and changes it in place; the result is checked
// and written as UpdateEndpoint writes it, and Disabled is applied with reason "manual" when it
// changed. An error from edit is returned as it is (wrapped), and nothing is written.
func (c *Client) EditEndpoint(ctx context.Context, app, endpoint string, edit func(in *EndpointIn) error) (*Endpoint, error) {
	var out *Endpoint
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		_ = c.box.openHeaders(ep) // what it cannot open stays sealed, and is written back as it is
		in := &EndpointIn{
			URL: ep.URL, UID: ep.UID, Description: ep.Description, Version: ep.Version,
			EventTypes: slices.Clone(ep.EventTypes), Channels: slices.Clone(ep.Channels),
			RateLimit: ep.RateLimit, MaxInFlight: ep.MaxInFlight, Headers: maps.Clone(ep.Headers),
			Scheme: ep.Scheme, Disabled: ep.Disabled, Metadata: maps.Clone(ep.Metadata),
		}
		if err := edit(in); err != nil {
			return err
		}
		in.Secret = ""
		if err := in.check(); err != nil {
			return err
		}
		if err := c.checkSchemeChange(ctx, tx, ep, in.Scheme); err != nil {
			return err
		}
		in.apply(ep)
		now := c.now()
		ep.UpdatedAt = now
		if err := tx.UpdateEndpoint(ctx, c.box.sealedEndpoint(ep)); err != nil {
			return err
		}
		ops := []OperationalEvent{c.endpointOp(OpEndpointUpdated, ep, "")}
		if in.Disabled != ep.Disabled {
			if err := tx.SetEndpointDisabled(ctx, ep.ID, in.Disabled, "manual", now); err != nil {
				return err
			}
			if in.Disabled {
				ops = append(ops, c.endpointOp(OpEndpointDisabled, ep, "manual"))
			}
		}
		out, err = tx.GetEndpoint(ctx, a.ID, ep.ID)
		if err != nil {
			return err
		}
		_ = c.box.openHeaders(out)
		return c.emitOps(ctx, tx, ops)
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: edit endpoint %q: %w", endpoint, err)
	}
	c.states.invalidate(out.ID)
	return out, nil
}

// checkSchemeChange refuses to move ep to scheme ("" is SchemeStandard) while one of its active
// keys cannot sign with it: a Stripe-shaped endpoint's secret of any text cannot sign Standard
// Webhooks, which need whsec_ or whsk_. Rotating the secret first (a new one suits every scheme)
// lets the change through.
func (c *Client) checkSchemeChange(ctx context.Context, tx Tx, ep *Endpoint, scheme SignatureScheme) error {
	if scheme == "" {
		scheme = SchemeStandard
	}
	if scheme == ep.Scheme {
		return nil
	}
	keys, err := tx.SigningKeys(ctx, ep.ID)
	if err != nil {
		return err
	}
	if err := c.box.openKeys(ep.ID, keys); err != nil {
		return err
	}
	now := c.now()
	for _, k := range keys {
		if k.ExpiresAt != nil && !k.ExpiresAt.After(now) {
			continue
		}
		var ve *ValidationError
		if err := CheckSecret(k.Secret, scheme); errors.As(err, &ve) {
			return invalid("scheme", fmt.Sprintf("the endpoint's signing secret cannot sign with %s (%s): rotate the secret first", scheme, ve.Reason))
		} else if err != nil {
			return err
		}
	}
	return nil
}
