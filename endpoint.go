package hookd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/signature"
)

// ApplicationIn creates or replaces an application.
type ApplicationIn struct {
	Name         string // required
	UID          string // optional, unique; any printable text
	ThrottleRate int    // messages per second to each endpoint without a rate of its own; 0: none
	Metadata     map[string]string
}

func (in *ApplicationIn) check() error {
	if in == nil {
		return invalid("application", "is nil")
	}
	if err := checkName("name", in.Name, maxNameLen); err != nil {
		return err
	}
	if in.UID != "" {
		if err := checkName("uid", in.UID, maxIDLen); err != nil {
			return err
		}
	}
	if in.ThrottleRate < 0 {
		return invalid("throttleRate", "must be zero or positive")
	}
	return checkMetadata(in.Metadata)
}

// CreateApplication creates an application. A taken UID is ErrConflict.
func (c *Client) CreateApplication(ctx context.Context, in *ApplicationIn) (*Application, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	now := c.now()
	app := &Application{
		ID: newID(prefixApp), UID: in.UID, Name: in.Name, ThrottleRate: in.ThrottleRate,
		Metadata: maps.Clone(in.Metadata), CreatedAt: now, UpdatedAt: now,
	}
	err := c.store.InTx(ctx, func(tx Tx) error { return tx.InsertApplication(ctx, app) })
	if err != nil {
		return nil, fmt.Errorf("hookd: create application: %w", err)
	}
	return app, nil
}

// GetApplication returns an application by id or uid.
func (c *Client) GetApplication(ctx context.Context, app string) (*Application, error) {
	a, err := c.store.GetApplication(ctx, app)
	if err != nil {
		return nil, fmt.Errorf("hookd: get application %q: %w", app, err)
	}
	return a, nil
}

// UpdateApplication replaces an application's fields.
func (c *Client) UpdateApplication(ctx context.Context, app string, in *ApplicationIn) (*Application, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	var out *Application
	err := c.store.InTx(ctx, func(tx Tx) error {
		a, err := tx.GetApplication(ctx, app)
		if err != nil {
			return err
		}
		a.Name, a.UID, a.ThrottleRate, a.Metadata = in.Name, in.UID, in.ThrottleRate, maps.Clone(in.Metadata)
		a.UpdatedAt = c.now()
		out = a
		return tx.UpdateApplication(ctx, a)
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: update application %q: %w", app, err)
	}
	return out, nil
}

// DeleteApplication deletes an application with its endpoints, messages and attempts.
func (c *Client) DeleteApplication(ctx context.Context, app string) error {
	err := c.store.InTx(ctx, func(tx Tx) error {
		a, err := tx.GetApplication(ctx, app)
		if err != nil {
			return err
		}
		return tx.DeleteApplication(ctx, a.ID)
	})
	if err != nil {
		return fmt.Errorf("hookd: delete application %q: %w", app, err)
	}
	return nil
}

// ListApplications lists applications, oldest first.
func (c *Client) ListApplications(ctx context.Context, opts ListOptions) (*Page[Application], error) {
	return c.store.ListApplications(ctx, opts)
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
	Disabled    bool
	Metadata    map[string]string
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

// CheckSecret reports whether secret can sign for an endpoint with scheme (whsec_ or whsk_ for the
// Standard Webhooks schemes, any secret of 16 characters or more but a whsk_ key for the
// Stripe-shaped ones): a *ValidationError for the field "secret" otherwise.
func CheckSecret(secret string, scheme SignatureScheme) error {
	var err error
	if scheme == SchemeStripe || scheme == SchemeEnvelope {
		if strings.HasPrefix(secret, "whsk_") {
			// The receiver would need the private key itself to check the HMAC.
			return invalid("secret", "a whsk_ ed25519 key cannot sign the Stripe-shaped scheme, which is an HMAC: use a whsec_ secret")
		}
		_, err = signature.NewStripeSigner(secret)
	} else {
		_, err = signature.NewSigner(secret)
	}
	if err != nil {
		return invalid("secret", err.Error())
	}
	return nil
}

func (in *EndpointIn) apply(ep *Endpoint) {
	ep.URL, ep.UID, ep.Description = in.URL, in.UID, in.Description
	ep.Version = max(in.Version, 1)
	ep.EventTypes, ep.Channels = slices.Clone(in.EventTypes), slices.Clone(in.Channels)
	ep.RateLimit, ep.MaxInFlight = in.RateLimit, in.MaxInFlight
	ep.Headers, ep.Metadata = maps.Clone(in.Headers), maps.Clone(in.Metadata)
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
	now := c.now()
	ep := &Endpoint{ID: newID(prefixEndpoint), CreatedAt: now, UpdatedAt: now}
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
	return c.EditEndpoint(ctx, app, endpoint, func(cur *EndpointIn) error {
		*cur = *in
		return nil
	})
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

// EndpointSecret returns the endpoint's newest signing secret.
func (c *Client) EndpointSecret(ctx context.Context, app, endpoint string) (string, error) {
	ep, err := c.GetEndpoint(ctx, app, endpoint)
	if err != nil {
		return "", err
	}
	keys, err := c.store.SigningKeys(ctx, ep.ID)
	if err == nil {
		err = c.box.openKeys(ep.ID, keys)
	}
	if err != nil {
		return "", fmt.Errorf("hookd: endpoint secret: %w", err)
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("hookd: endpoint %s has no signing key: %w", ep.ID, ErrNotFound)
	}
	return keys[0].Secret, nil
}

// RotateSecret gives the endpoint a new secret (secret, or a new whsec_ one when empty). The old
// keys keep signing for Config.RotationGrace, so receivers can switch without missing a delivery.
func (c *Client) RotateSecret(ctx context.Context, app, endpoint, secret string) (string, error) {
	return c.RotateSecretGrace(ctx, app, endpoint, secret, c.cfg.RotationGrace)
}

// inApp runs fn in a transaction with the application found by id or uid.
func (c *Client) inApp(ctx context.Context, app string, fn func(tx Tx, a *Application) error) error {
	return c.store.InTx(ctx, func(tx Tx) error {
		a, err := tx.GetApplication(ctx, app)
		if err != nil {
			return err
		}
		return fn(tx, a)
	})
}

// UpsertEventType creates or updates an event type (and un-archives it).
func (c *Client) UpsertEventType(ctx context.Context, et *EventType) (*EventType, error) {
	if et == nil {
		return nil, invalid("eventType", "is nil")
	}
	if err := CheckEventTypeName("name", et.Name); err != nil {
		return nil, err
	}
	if err := checkText("description", et.Description, maxDescription); err != nil {
		return nil, err
	}
	if len(et.FeatureFlags) > 0 && et.FeatureFlag != "" && et.FeatureFlag != et.FeatureFlags[0] {
		return nil, invalid("featureFlag", "is the first of FeatureFlags; they differ")
	}
	for _, f := range et.Flags() {
		if f == "" {
			return nil, invalid("featureFlags", "holds an empty flag")
		}
		if err := checkText("featureFlags", f, maxIDLen); err != nil {
			return nil, err
		}
	}
	if err := checkText("groupName", et.GroupName, maxIDLen); err != nil {
		return nil, err
	}
	out := *et
	now := c.now()
	out.Archived, out.UpdatedAt = false, now
	if out.CreatedAt.IsZero() {
		out.CreatedAt = now
	}
	err := c.store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpsertEventType(ctx, &out); err != nil {
			return err
		}
		got, err := tx.GetEventType(ctx, out.Name)
		if err == nil {
			out = *got
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("hookd: upsert event type %q: %w", et.Name, err)
	}
	return &out, nil
}

// GetEventType returns an event type.
func (c *Client) GetEventType(ctx context.Context, name string) (*EventType, error) {
	return c.store.GetEventType(ctx, name)
}

// DeleteEventType archives an event type, or with expunge removes it for good.
func (c *Client) DeleteEventType(ctx context.Context, name string, expunge bool) error {
	err := c.store.InTx(ctx, func(tx Tx) error {
		if _, err := tx.GetEventType(ctx, name); err != nil {
			return err
		}
		if expunge {
			return tx.DeleteEventType(ctx, name)
		}
		return tx.ArchiveEventType(ctx, name, c.now())
	})
	if err != nil {
		return fmt.Errorf("hookd: delete event type %q: %w", name, err)
	}
	return nil
}

// ListEventTypes lists event types by name.
func (c *Client) ListEventTypes(ctx context.Context, includeArchived bool, opts ListOptions) (*Page[EventType], error) {
	return c.store.ListEventTypes(ctx, includeArchived, opts)
}
