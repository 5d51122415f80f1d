package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	if f.MessageID == "" {
		var other bool
		if f.AppID, other = r.endpointApp(ctx, f.EndpointID, f.AppID); other {
			return emptyPage[hookd.Delivery](), nil
		}
	}
	l := NewList(d, cols, "hookd_deliveries d", "d.id")
	l.Equal("d.message_id", f.MessageID)
	l.Equal("d.endpoint_id", f.EndpointID)
	l.Equal("d.app_id", f.AppID)
	statuses := f.Statuses
	if f.Status != "" {
		statuses = []hookd.DeliveryStatus{f.Status}
	} else if len(statuses) == 0 && d.StatusBranches && (f.EndpointID != "" || f.AppID != "") && f.MessageID == "" {
		statuses = deliveryStatuses
	}
	var conds []Condition // one for each status, which AnyOf needs to exclude each other
	for i, s := range statuses {
		if !slices.Contains(statuses[:i], s) {
			conds = append(conds, deliveryStatusIs(s))
		}
	}
	l.AnyOf(conds...)
	if f.After != nil {
		l.Filter("d.created_at >= ?", d.Time(*f.After))
	}
	if f.FromID != "" {
		l.Filter("d.id >= ?", f.FromID)
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

// endpointApp returns the application filter of a list of an endpoint's rows (deliveries or
// attempts), all of which are of the endpoint's application: "" when the endpoint is of appID,
// so that the list filters by the endpoint alone (a second filter costs a row test at best; at
// worst, on PostgreSQL, a generic plan that ANDs the two indexes' bitmaps and sorts), and other
// true when it is of another application, whose rows the list then must not show. An endpoint
// deleted since keeps the filter, as does a read that fails (the list then runs as asked).
func (r Reads) endpointApp(ctx context.Context, endpointID, appID string) (app string, other bool) {
	if endpointID == "" || appID == "" {
		return appID, false
	}
	var of string
	if err := r.q.QueryRow(ctx, r.dialect.Bind(`SELECT app_id FROM hookd_endpoints WHERE id = ?`), endpointID).Scan(&of); err != nil {
		return appID, false
	}
	return "", of != appID
}

// emptyPage is a list's page when no row can match.
func emptyPage[T any]() *hookd.Page[T] { return &hookd.Page[T]{Data: []T{}, Done: true} }

// deliveryStatusIs is the condition that a delivery has status s. A known status is written as a
// literal, so that a generic plan can still use a partial index whose predicate names statuses
// (PostgreSQL's indexes of an endpoint's deliveries).
func deliveryStatusIs(s hookd.DeliveryStatus) Condition {
	if slices.Contains(deliveryStatuses, s) {
		return Condition{SQL: "d.status = '" + string(s) + "'"}
	}
	return Condition{SQL: "d.status = ?", Args: []any{string(s)}}
}

// deliveryStatuses are the statuses a delivery can have.
var deliveryStatuses = []hookd.DeliveryStatus{hookd.DeliveryPending, hookd.DeliveryDelivered, hookd.DeliveryFailed, hookd.DeliveryCancelled}

// ListAttempts lists attempts newest first. No index holds an attempt's delivery: a delivery is
// one message to one endpoint of one application, so with f.DeliveryID and no f.MessageID the
// list reads the delivery first and filters by its message instead of its endpoint and
// application, walking the message's attempts (hookd_attempts_message_id), a few for each
// endpoint. A delivery that does not exist, or is not of f's endpoint or application, has no
// attempts.
func (r Reads) ListAttempts(ctx context.Context, f hookd.AttemptFilter) (*hookd.Page[hookd.Attempt], error) {
	d, q, cols := r.dialect, r.q, r.cols.Attempt
	if f.DeliveryID != "" && f.MessageID == "" {
		var endpointID, appID string
		err := q.QueryRow(ctx, d.Bind(`SELECT message_id, endpoint_id, app_id FROM hookd_deliveries WHERE id = ?`),
			f.DeliveryID).Scan(&f.MessageID, &endpointID, &appID)
		if errors.Is(err, hookd.ErrNotFound) || err == nil && (f.EndpointID != "" && f.EndpointID != endpointID || f.AppID != "" && f.AppID != appID) {
			return emptyPage[hookd.Attempt](), nil
		}
		if err != nil {
			return nil, fmt.Errorf("list attempts of delivery %s: %w", f.DeliveryID, err)
		}
		// The delivery's attempts are all of its endpoint and application: without those
		// filters, no plan can walk their indexes instead of the message's.
		f.EndpointID, f.AppID = "", ""
	}
	if f.MessageID == "" {
		var other bool
		if f.AppID, other = r.endpointApp(ctx, f.EndpointID, f.AppID); other {
			return emptyPage[hookd.Attempt](), nil
		}
	}
	l := NewList(d, cols, "hookd_attempts a", "a.id")
	l.NewestFirst = true
	l.Equal("a.message_id", f.MessageID)
	l.Equal("a.delivery_id", f.DeliveryID)
	l.Equal("a.endpoint_id", f.EndpointID)
	l.Equal("a.app_id", f.AppID)
	// The outcome is written as a literal, so that a failure's filter matches the predicate of
	// the index of an endpoint's failed attempts (migration 17) in a generic plan too.
	switch {
	case f.Success == nil:
	case *f.Success:
		l.Filter("NOT (" + d.Not("a.success") + ")")
	default:
		l.Filter(d.Not("a.success"))
	}
	if types := Unique(f.EventTypes); len(types) > 0 {
		attemptEventTypes(d, l, f, types)
	}
	if f.Channel != "" {
		// The message's channels are checked attempt by attempt, walking the attempts in order
		// from the index of the filters above.
		l.Filter(`EXISTS (SELECT 1 FROM hookd_message_channels c WHERE c.message_id = a.message_id AND c.channel = ?)`, f.Channel)
	}
	if f.After != nil {
		l.FromTime = f.FromAfter && f.Before == nil // with both, Svix lists the window newest first
		l.Filter("a.at >= ?", d.Time(*f.After))
	}
	if f.FromID != "" {
		l.Filter("a.id >= ?", f.FromID)
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

// attemptEventTypes filters l, a list of attempts, to those of messages of types. An attempt
// carries its message's event type (migration 17 on both stores; NULL in the rows recorded
// before it, whose message is then read). Of an endpoint, with up to maxTypeBranches types, the
// list is one branch a type, each a range of the index (event_type, endpoint_id, id) in id
// order, and one more for the rows without a type, the range of NULLs in that index, whose
// messages are read: an empty range once the attempts recorded before the migration are gone.
// Otherwise the types are checked attempt by attempt on the index of the other filters.
func attemptEventTypes(d *Dialect, l *List, f hookd.AttemptFilter, types []string) {
	// An untyped row's message is read row by row (a subquery no plan turns into a join, which
	// PostgreSQL would make a hash of every message of the types).
	untyped := "a.event_type IS NULL AND " + d.InList("(SELECT m.event_type FROM hookd_messages m WHERE m.id = a.message_id)")
	if f.EndpointID != "" && f.MessageID == "" && f.DeliveryID == "" && len(types) <= maxTypeBranches {
		conds := make([]Condition, 0, len(types)+1)
		for _, et := range types {
			conds = append(conds, Condition{SQL: "a.event_type = ?", Args: []any{et}})
		}
		conds = append(conds, Condition{SQL: untyped, Args: []any{d.ListArg(types)}})
		l.AnyOf(conds...)
		return
	}
	l.Filter("("+d.InList("a.event_type")+" OR "+untyped+")", d.ListArg(types), d.ListArg(types))
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
	// The id bounds stand for the times' (MessageFilter.FromID): the walk of the index starts and
	// ends there rather than at the application's newest and oldest message.
	if f.FromID != "" {
		l.Filter("m.id >= ?", f.FromID)
	}
	if f.BeforeID != "" {
		l.Filter("m.id < ?", f.BeforeID)
	}
	page, err := Page(ctx, q, l, f.ListOptions, d.ScanMessage, func(m *hookd.Message) string { return m.ID })
	if err != nil {
		return nil, fmt.Errorf("list messages of application %s: %w", f.AppID, err)
	}
	return page, nil
}
