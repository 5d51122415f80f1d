package hookd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/signature"
)

// Endpoint is one URL of an application that receives its messages.
type Endpoint struct {
	ID          string // "ep_..."
	AppID       string
	UID         string // optional, unique within the application
	URL         string
	Description string
	Version     int
	// EventTypes filters the messages the endpoint receives; empty means every event type.
	EventTypes []string
	// Channels filters by channel: when set, a message is delivered only if it names one of them.
	Channels []string
	Disabled bool
	// DisabledReason says why the endpoint was disabled ("manual", "gone (HTTP 410)", ...).
	DisabledReason string
	DisabledAt     *time.Time
	// RateLimit caps messages per second to the endpoint (Svix's throttleRate). Zero: the
	// application's ThrottleRate, else no cap.
	RateLimit int
	// MaxInFlight caps attempts in flight to the endpoint. Zero: Config.MaxInFlightPerEndpoint.
	MaxInFlight int
	// Headers are added to every request to the endpoint.
	Headers map[string]string
	Scheme  SignatureScheme
	// RetrySchedule is the endpoint's own wait before each retry (its length is the number of
	// retries; empty: none). Nil: its application's, else Config.RetrySchedule.
	RetrySchedule []time.Duration
	// AttemptTimeout is the endpoint's own time for one attempt, at most Config.MaxTimeout. Zero:
	// its application's, else the delivery timeout.
	AttemptTimeout time.Duration
	// Ordered makes the endpoint's deliveries go one at a time in message order: a delivery is
	// attempted only once every earlier one to the endpoint is delivered, failed or cancelled
	// (ordered.go). Manual attempts are not held back. Default false.
	Ordered  bool
	Metadata map[string]string

	CreatedAt time.Time
	UpdatedAt time.Time

	// Health, kept by the worker.
	LastAttemptAt       *time.Time
	LastStatus          int    // HTTP status of the last attempt; 0 when none arrived
	LastError           string // the last attempt's failure, empty after a success
	LastSuccessAt       *time.Time
	FailingSince        *time.Time // the first failure after the last success
	ConsecutiveFailures int
}

// SignatureScheme is how an endpoint's deliveries are signed.
type SignatureScheme string

const (
	// SchemeStandard is Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature (v1
	// HMAC-SHA256, or v1a ed25519 for whsk_ keys), and the same under svix-* names, as
	// Config.SignatureHeaders says. The default.
	SchemeStandard SignatureScheme = "standard"
	// SchemeSvix is Standard Webhooks under the svix-id, svix-timestamp, svix-signature names.
	SchemeSvix SignatureScheme = "svix"
	// SchemeStripe is the Stripe-shaped scheme: X-Webhook-Signature: t=<unix>,v1=<hex>,
	// repeated as Stripe-Signature for Stripe's libraries, with X-Webhook-Event and
	// X-Webhook-Timestamp.
	SchemeStripe SignatureScheme = "stripe"
	// SchemeEnvelope is the whole envelope format: the body is the envelope {"id", "type",
	// "occurredAt", "data"} (id: the message's event id, or its id; occurredAt: when the message
	// was created, RFC 3339 in UTC to the millisecond; data: the payload), signed as SchemeStripe.
	SchemeEnvelope SignatureScheme = "envelope"
)

// SigningKey is one of an endpoint's secrets. Every unexpired key signs, so during a rotation
// receivers holding the old or the new secret both verify.
type SigningKey struct {
	Secret    string // whsec_ (HMAC) or whsk_ (ed25519)
	CreatedAt time.Time
	ExpiresAt *time.Time // nil: does not expire
}

// EndpointIn creates or replaces an endpoint.
type EndpointIn struct {
	URL         string // required: http or https
	UID         string // optional, unique within the application
	Description string
	Version     int // default 1
	EventTypes  []string
	Channels    []string
	RateLimit   int // messages per second; 0: the application's ThrottleRate
	MaxInFlight int // 0: Config.MaxInFlightPerEndpoint
	Headers     map[string]string
	Scheme      SignatureScheme // default SchemeStandard
	// RetrySchedule and AttemptTimeout are the endpoint's retry policy (Endpoint's fields of the
	// same names); nil and 0 inherit. Bounded as Client.CheckRetryPolicy says.
	RetrySchedule  []time.Duration
	AttemptTimeout time.Duration
	// Ordered is Endpoint.Ordered: deliveries one at a time in message order. Default false.
	Ordered  bool
	Disabled bool
	Metadata map[string]string
	// Secret is the signing secret (whsec_ or whsk_). Empty: a new whsec_ secret. Create only.
	Secret string
}

func (in *EndpointIn) check() error {
	if in == nil {
		return invalid("endpoint", "is nil")
	}
	if err := delivery.ValidateURL(in.URL); err != nil {
		var ue *delivery.URLError
		if errors.As(err, &ue) {
			return invalid("url", ue.Reason)
		}
		return invalid("url", err.Error())
	}
	if in.UID != "" {
		if err := checkName("uid", in.UID, maxIDLen); err != nil {
			return err
		}
	}
	if err := checkText("description", in.Description, maxDescription); err != nil {
		return err
	}
	if err := checkMetadata(in.Metadata); err != nil {
		return err
	}
	for _, et := range in.EventTypes {
		if err := CheckEventTypeName("filterTypes", et); err != nil {
			return err
		}
	}
	if len(in.Channels) > maxChannels {
		return invalid("channels", fmt.Sprintf("%d channels, at most %d", len(in.Channels), maxChannels))
	}
	for _, ch := range in.Channels {
		if err := checkName("channels", ch, maxChannelLen); err != nil {
			return err
		}
	}
	if in.RateLimit < 0 {
		return invalid("rateLimit", "must be zero or positive")
	}
	if in.MaxInFlight < 0 {
		return invalid("maxInFlight", "must be zero or positive")
	}
	switch in.Scheme {
	case "", SchemeStandard, SchemeSvix, SchemeStripe, SchemeEnvelope:
	default:
		return invalid("scheme", fmt.Sprintf("%q is not one of standard, svix, stripe, envelope", in.Scheme))
	}
	if in.Secret != "" {
		if err := CheckSecret(in.Secret, in.Scheme); err != nil {
			return err
		}
	}
	return nil
}

func (in *EndpointIn) apply(ep *Endpoint) {
	ep.URL, ep.UID, ep.Description = in.URL, in.UID, in.Description
	ep.Version = max(in.Version, 1)
	ep.EventTypes, ep.Channels = slices.Clone(in.EventTypes), slices.Clone(in.Channels)
	ep.RateLimit, ep.MaxInFlight = in.RateLimit, in.MaxInFlight
	ep.Headers, ep.Metadata = maps.Clone(in.Headers), maps.Clone(in.Metadata)
	ep.RetrySchedule, ep.AttemptTimeout = cloneSchedule(in.RetrySchedule), in.AttemptTimeout
	ep.Ordered = in.Ordered
	ep.Scheme = in.Scheme
	if ep.Scheme == "" {
		ep.Scheme = SchemeStandard
	}
}

// CreateEndpoint adds an endpoint to an application.
func (c *Client) CreateEndpoint(ctx context.Context, app string, in *EndpointIn) (*Endpoint, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := c.CheckRetryPolicy(in.RetrySchedule, in.AttemptTimeout); err != nil {
		return nil, err
	}
	now := c.now()
	ep := &Endpoint{ID: c.newID(prefixEndpoint), CreatedAt: now, UpdatedAt: now}
	in.apply(ep)
	secret := in.Secret
	if secret == "" {
		secret = signature.NewSecret()
	}
	err := c.store.InTx(ctx, func(tx Tx) error {
		a, err := tx.GetApplication(ctx, app)
		if err != nil {
			return err
		}
		ep.AppID = a.ID
		if err := checkEndpointQuota(ctx, tx, a.ID, c.cfg.MaxEndpointsPerApp); err != nil {
			return err
		}
		if err := tx.InsertEndpoint(ctx, c.box.sealedEndpoint(ep), SigningKey{Secret: c.box.seal(ep.ID, secret), CreatedAt: now}); err != nil {
			return err
		}
		if in.Disabled {
			ep.Disabled, ep.DisabledReason, ep.DisabledAt = true, "manual", &now
			if err := tx.SetEndpointDisabled(ctx, ep.ID, true, "manual", now); err != nil {
				return err
			}
		}
		return c.emitOps(ctx, tx, []OperationalEvent{c.endpointOp(OpEndpointCreated, ep, "")})
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: create endpoint: %w", err)
	}
	return ep, nil
}

// GetEndpoint returns an endpoint of an application by id or uid.
func (c *Client) GetEndpoint(ctx context.Context, app, endpoint string) (*Endpoint, error) {
	var ep *Endpoint
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		var err error
		ep, err = tx.GetEndpoint(ctx, a.ID, endpoint)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: get endpoint %q: %w", endpoint, err)
	}
	_ = c.box.openHeaders(ep) // what it cannot open stays sealed (secret_box.go)
	return ep, nil
}

// UpdateEndpoint replaces an endpoint's configuration (its secret stays; see RotateSecret).
func (c *Client) UpdateEndpoint(ctx context.Context, app, endpoint string, in *EndpointIn) (*Endpoint, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := c.CheckRetryPolicy(in.RetrySchedule, in.AttemptTimeout); err != nil {
		return nil, err
	}
	return c.EditEndpoint(ctx, app, endpoint, func(cur *EndpointIn) error {
		*cur = *in
		return nil
	})
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
			RetrySchedule: cloneSchedule(ep.RetrySchedule), AttemptTimeout: ep.AttemptTimeout,
			Ordered: ep.Ordered,
		}
		if err := edit(in); err != nil {
			return err
		}
		in.Secret = ""
		if err := in.check(); err != nil {
			return err
		}
		if err := c.CheckRetryPolicy(in.RetrySchedule, in.AttemptTimeout); err != nil {
			return err
		}
		if err := c.checkSchemeChange(ctx, tx, ep, in.Scheme); err != nil {
			return err
		}
		wasOrdered := ep.Ordered
		in.apply(ep)
		now := c.now()
		ep.UpdatedAt = now
		if err := tx.UpdateEndpoint(ctx, c.box.sealedEndpoint(ep)); err != nil {
			return err
		}
		if wasOrdered && !ep.Ordered {
			if err := c.unparkAll(ctx, tx, ep.ID, now); err != nil {
				return err
			}
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

// DeleteEndpoint deletes an endpoint; its pending deliveries are cancelled when their jobs run.
func (c *Client) DeleteEndpoint(ctx context.Context, app, endpoint string) error {
	var id string
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		id = ep.ID
		if err := tx.DeleteEndpoint(ctx, ep.ID); err != nil {
			return err
		}
		return c.emitOps(ctx, tx, []OperationalEvent{c.endpointOp(OpEndpointDeleted, ep, "")})
	})
	if err != nil {
		return fmt.Errorf("hookd: delete endpoint %q: %w", endpoint, err)
	}
	c.states.invalidate(id)
	return nil
}

// ListEndpoints lists an application's endpoints, oldest first.
func (c *Client) ListEndpoints(ctx context.Context, app string, opts ListOptions) (*Page[Endpoint], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	page, err := c.store.ListEndpoints(ctx, a.ID, opts)
	if err != nil {
		return nil, err
	}
	for i := range page.Data {
		_ = c.box.openHeaders(&page.Data[i]) // what it cannot open stays sealed (secret_box.go)
	}
	return page, nil
}

// SetEndpointDisabled disables (with a reason) or enables an endpoint.
func (c *Client) SetEndpointDisabled(ctx context.Context, app, endpoint string, disabled bool, reason string) error {
	if reason == "" {
		reason = "manual"
	}
	var id string
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		id = ep.ID
		if err := tx.SetEndpointDisabled(ctx, ep.ID, disabled, reason, c.now()); err != nil {
			return err
		}
		if !disabled || ep.Disabled {
			return nil
		}
		return c.emitOps(ctx, tx, []OperationalEvent{c.endpointOp(OpEndpointDisabled, ep, reason)})
	})
	if err != nil {
		return fmt.Errorf("hookd: set endpoint %q disabled=%t: %w", endpoint, disabled, err)
	}
	c.states.invalidate(id)
	return nil
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
