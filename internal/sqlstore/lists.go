package sqlstore

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

// The lists of the stores' entities: which rows, in which order, through which index. cols is
// the store's column list for the entity, in the order its scanner reads.

// ListApplications lists applications oldest first.
func (r Reads) ListApplications(ctx context.Context, opts hookd.ListOptions) (*hookd.Page[hookd.Application], error) {
	d, q, cols := r.dialect, r.q, r.cols.Application
	l := NewList(d, cols, "hookd_applications a", "a.id")
	page, err := Page(ctx, q, l, opts, d.ScanApplication, func(a *hookd.Application) string { return a.ID })
	if err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	return page, nil
}

// ListEndpoints lists the application's endpoints oldest first.
func (r Reads) ListEndpoints(ctx context.Context, appID string, opts hookd.ListOptions) (*hookd.Page[hookd.Endpoint], error) {
	d, q, cols := r.dialect, r.q, r.cols.Endpoint
	l := NewList(d, cols, "hookd_endpoints e", "e.id")
	l.Filter("e.app_id = ?", appID)
	page, err := Page(ctx, q, l, opts, d.ScanEndpoint, func(e *hookd.Endpoint) string { return e.ID })
	if err != nil {
		return nil, fmt.Errorf("list endpoints of application %s: %w", appID, err)
	}
	return page, nil
}

// ListEventTypes lists event types by name, the archived ones too when includeArchived.
func (r Reads) ListEventTypes(ctx context.Context, includeArchived bool, opts hookd.ListOptions) (*hookd.Page[hookd.EventType], error) {
	d, q, cols := r.dialect, r.q, r.cols.EventType
	l := NewList(d, cols, "hookd_event_types t", "t.name")
	if !includeArchived {
		l.Filter(d.Not("t.archived"))
	}
	page, err := Page(ctx, q, l, opts, d.ScanEventType, func(et *hookd.EventType) string { return et.Name })
	if err != nil {
		return nil, fmt.Errorf("list event types: %w", err)
	}
	return page, nil
}

// ListOperationalEvents lists operational events oldest first.
func (r Reads) ListOperationalEvents(ctx context.Context, opts hookd.ListOptions) (*hookd.Page[hookd.OperationalEvent], error) {
	d, q, cols := r.dialect, r.q, r.cols.OperationalEvent
	l := NewList(d, cols, "hookd_operational_events o", "o.id")
	page, err := Page(ctx, q, l, opts, d.ScanOperationalEvent, func(ev *hookd.OperationalEvent) string { return ev.ID })
	if err != nil {
		return nil, fmt.Errorf("list operational events: %w", err)
	}
	return page, nil
}

// ListDeliveries lists deliveries oldest first.
func (r Reads) ListDeliveries(ctx context.Context, f hookd.DeliveryFilter) (*hookd.Page[hookd.Delivery], error) {
	d, q, cols := r.dialect, r.q, r.cols.Delivery
	l := NewList(d, cols, "hookd_deliveries d", "d.id")
	l.Equal("d.message_id", f.MessageID)
	l.Equal("d.endpoint_id", f.EndpointID)
	l.Equal("d.app_id", f.AppID)
	switch f.Status {
	case "":
		if d.StatusBranches && f.EndpointID != "" && f.MessageID == "" {
			conds := make([]Condition, len(deliveryStatuses))
			for i, s := range deliveryStatuses {
				conds[i] = Condition{SQL: "d.status = '" + string(s) + "'"}
			}
			l.AnyOf(conds...)
		}
	case hookd.DeliveryPending, hookd.DeliveryDelivered, hookd.DeliveryFailed, hookd.DeliveryCancelled:
		// A known status is written as a literal, so that a generic plan can still use a
		// partial index whose predicate names statuses (PostgreSQL's indexes of an
		// endpoint's deliveries).
		l.Filter("d.status = '" + string(f.Status) + "'")
	default:
		l.Filter("d.status = ?", string(f.Status))
	}
	if f.After != nil {
		l.Filter("d.created_at >= ?", d.Time(*f.After))
	}
	if f.Before != nil {
		l.Filter("d.created_at < ?", d.Time(*f.Before))
	}
	page, err := Page(ctx, q, l, f.ListOptions, d.ScanDelivery, func(dl *hookd.Delivery) string { return dl.ID })
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return page, nil
}

// deliveryStatuses are the statuses a delivery can have.
var deliveryStatuses = []hookd.DeliveryStatus{hookd.DeliveryPending, hookd.DeliveryDelivered, hookd.DeliveryFailed, hookd.DeliveryCancelled}

// ListAttempts lists attempts newest first.
func (r Reads) ListAttempts(ctx context.Context, f hookd.AttemptFilter) (*hookd.Page[hookd.Attempt], error) {
	d, q, cols := r.dialect, r.q, r.cols.Attempt
	l := NewList(d, cols, "hookd_attempts a", "a.id")
	l.NewestFirst = true
	l.Equal("a.delivery_id", f.DeliveryID)
	l.Equal("a.message_id", f.MessageID)
	l.Equal("a.endpoint_id", f.EndpointID)
	l.Equal("a.app_id", f.AppID)
	if f.Success != nil {
		l.Filter("a.success = ?", *f.Success)
	}
	// The message's event type and channels are checked attempt by attempt, walking the attempts in
	// order from the index of the filters above: fast unless few attempts match (a rare event type
	// over a long log).
	if types := Unique(f.EventTypes); len(types) > 0 {
		l.Filter("EXISTS (SELECT 1 FROM hookd_messages m WHERE m.id = a.message_id AND "+d.InList("m.event_type")+")", d.ListArg(types))
	}
	if f.Channel != "" {
		l.Filter(`EXISTS (SELECT 1 FROM hookd_message_channels c WHERE c.message_id = a.message_id AND c.channel = ?)`, f.Channel)
	}
	if f.After != nil {
		l.FromTime = f.FromAfter && f.Before == nil // with both, Svix lists the window newest first
		l.Filter("a.at >= ?", d.Time(*f.After))
	}
	if f.Before != nil {
		l.Filter("a.at < ?", d.Time(*f.Before))
	}
	page, err := Page(ctx, q, l, f.ListOptions, d.ScanAttempt, func(a *hookd.Attempt) string { return a.ID })
	if err != nil {
		return nil, fmt.Errorf("list attempts: %w", err)
	}
	return page, nil
}

// ListMessages lists messages newest first. With an application, a tag's or a channel's index
// leads; more than maxTypeBranches event types are tested message by message against one list.
func (r Reads) ListMessages(ctx context.Context, f hookd.MessageFilter) (*hookd.Page[hookd.Message], error) {
	d, q, cols := r.dialect, r.q, r.cols.Message
	l := NewList(d, cols, "hookd_messages m", "m.id")
	l.NewestFirst = true
	switch {
	case f.Tag != "" && f.AppID != "":
		// The tag's index leads; a channel is then checked message by message.
		l.From = "hookd_message_tags g " + d.Join + " hookd_messages m ON m.id = g.message_id"
		l.Key = "g.message_id"
		l.Filter("g.app_id = ? AND g.tag = ?", f.AppID, f.Tag)
		if f.Channel != "" {
			l.Filter("EXISTS (SELECT 1 FROM hookd_message_channels c WHERE c.message_id = m.id AND c.channel = ?)", f.Channel)
		}
	case f.Channel != "" && f.AppID != "":
		// The channel's index leads.
		l.From = "hookd_message_channels c " + d.Join + " hookd_messages m ON m.id = c.message_id"
		l.Key = "c.message_id"
		l.Filter("c.app_id = ? AND c.channel = ?", f.AppID, f.Channel)
	case f.Channel != "":
		l.Filter(d.ChannelFilter, f.Channel)
	default:
		l.Equal("m.app_id", f.AppID)
	}
	if f.Tag != "" && f.AppID == "" {
		l.Filter("EXISTS (SELECT 1 FROM hookd_message_tags g WHERE g.message_id = m.id AND g.tag = ?)", f.Tag)
	}
	if types := Unique(f.EventTypes); len(types) > maxTypeBranches {
		l.Filter(d.InList("m.event_type"), d.ListArg(types))
	} else if len(types) > 0 {
		conds := make([]Condition, len(types))
		for i, et := range types {
			conds[i] = Condition{SQL: "m.event_type = ?", Args: []any{et}}
		}
		l.AnyOf(conds...)
	}
	if f.After != nil {
		l.FromTime = f.FromAfter && f.Before == nil // with both, Svix lists the window newest first
		l.Filter("m.created_at >= ?", d.Time(*f.After))
	}
	if f.Before != nil {
		l.Filter("m.created_at < ?", d.Time(*f.Before))
	}
	page, err := Page(ctx, q, l, f.ListOptions, d.ScanMessage, func(m *hookd.Message) string { return m.ID })
	if err != nil {
		return nil, fmt.Errorf("list messages of application %s: %w", f.AppID, err)
	}
	return page, nil
}
