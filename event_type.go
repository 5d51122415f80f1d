package hookd

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// EventType is an entry in the producer's catalogue of event types.
type EventType struct {
	Name        string
	Description string
	Schemas     json.RawMessage // JSON Schema by version, as Svix stores it; may be nil
	// FeatureFlags hide the event type from app-portal tokens that hold none of them (hookd's
	// tokens hold none); empty: every token sees it.
	FeatureFlags []string
	// FeatureFlag is the first of FeatureFlags, the one flag of the open-source Svix server. Set
	// alone, with FeatureFlags empty, it is the list of one flag.
	FeatureFlag string
	GroupName   string // the group the event type is shown in (Svix's groupName); "" for none
	Deprecated  bool   // still sent, but marked for consumers as on its way out
	Archived    bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Flags returns the event type's feature flags: FeatureFlags, or FeatureFlag alone when
// FeatureFlags is empty.
func (et *EventType) Flags() []string {
	switch {
	case len(et.FeatureFlags) > 0:
		return et.FeatureFlags
	case et.FeatureFlag != "":
		return []string{et.FeatureFlag}
	}
	return nil
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
