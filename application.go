package hookd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// Application is one customer of the API producer: the owner of endpoints and messages.
type Application struct {
	ID   string // "app_..."
	UID  string // the producer's own id for the customer; optional, unique. Any printable text.
	Name string
	// ThrottleRate caps the messages per second sent to each of the application's endpoints that
	// sets no rate of its own. Zero: no cap.
	ThrottleRate int
	// RetrySchedule is the retry schedule of the application's endpoints that set none of their
	// own (empty: no retries). Nil: Config.RetrySchedule.
	RetrySchedule []time.Duration
	// AttemptTimeout is the attempt timeout of the application's endpoints that set none of their
	// own. Zero: the delivery timeout.
	AttemptTimeout time.Duration
	Metadata       map[string]string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ApplicationIn creates or replaces an application.
type ApplicationIn struct {
	Name         string // required
	UID          string // optional, unique; any printable text
	ThrottleRate int    // messages per second to each endpoint without a rate of its own; 0: none
	// RetrySchedule and AttemptTimeout are the default retry policy of the application's
	// endpoints (Application's fields of the same names); nil and 0: the server's. Bounded as
	// Client.CheckRetryPolicy says.
	RetrySchedule  []time.Duration
	AttemptTimeout time.Duration
	Metadata       map[string]string
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

// CreateApplication creates an application. A taken UID is a *ConflictError (ErrConflict) naming
// it; GetOrCreateApplication returns the existing application instead.
func (c *Client) CreateApplication(ctx context.Context, in *ApplicationIn) (*Application, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if err := c.CheckRetryPolicy(in.RetrySchedule, in.AttemptTimeout); err != nil {
		return nil, err
	}
	now := c.now()
	app := &Application{
		ID: c.newID(prefixApp), UID: in.UID, Name: in.Name, ThrottleRate: in.ThrottleRate,
		RetrySchedule: cloneSchedule(in.RetrySchedule), AttemptTimeout: in.AttemptTimeout,
		Metadata: maps.Clone(in.Metadata), CreatedAt: now, UpdatedAt: now,
	}
	err := c.store.InTx(ctx, func(tx Tx) error { return tx.InsertApplication(ctx, app) })
	var ce *ConflictError
	if errors.As(err, &ce) && ce.Field == "uid" {
		return nil, fmt.Errorf("hookd: create application: %w (GetOrCreateApplication returns the existing one)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("hookd: create application: %w", err)
	}
	return app, nil
}

// GetOrCreateApplication returns the application whose uid is in.UID, as it is, or creates it
// from in when there is none (the Svix SDKs' Application.GetOrCreate): code that sets up its
// applications may run again. in.UID is required. Two callers racing get the same application.
func (c *Client) GetOrCreateApplication(ctx context.Context, in *ApplicationIn) (*Application, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.UID == "" {
		return nil, invalid("uid", "is required to get or create an application")
	}
	for range 2 {
		a, err := c.store.GetApplication(ctx, in.UID)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("hookd: get or create application %q: %w", in.UID, err)
		}
		a, err = c.CreateApplication(ctx, in)
		if !errors.Is(err, ErrConflict) {
			return a, err
		}
		// Created meanwhile by another caller: read it.
	}
	return nil, fmt.Errorf("hookd: get or create application %q: created and deleted meanwhile: %w", in.UID, ErrConflict)
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
	if err := c.CheckRetryPolicy(in.RetrySchedule, in.AttemptTimeout); err != nil {
		return nil, err
	}
	var out *Application
	err := c.store.InTx(ctx, func(tx Tx) error {
		a, err := tx.GetApplication(ctx, app)
		if err != nil {
			return err
		}
		a.Name, a.UID, a.ThrottleRate, a.Metadata = in.Name, in.UID, in.ThrottleRate, maps.Clone(in.Metadata)
		a.RetrySchedule, a.AttemptTimeout = cloneSchedule(in.RetrySchedule), in.AttemptTimeout
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
