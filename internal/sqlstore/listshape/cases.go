package listshape

import (
	"context"
	"slices"
	"time"

	"github.com/hookd/hookd"
)

// Lister is what the cases list through: a store's reads.
type Lister interface {
	ListMessages(ctx context.Context, f hookd.MessageFilter) (*hookd.Page[hookd.Message], error)
	ListDeliveries(ctx context.Context, f hookd.DeliveryFilter) (*hookd.Page[hookd.Delivery], error)
	ListAttempts(ctx context.Context, f hookd.AttemptFilter) (*hookd.Page[hookd.Attempt], error)
}

// Case is one list of the shape's rows, as a client asks for it, with the ids of its first page.
type Case struct {
	Name string
	// SQLite and Postgres are the indexes the list must walk on each store, comma-separated (on
	// PostgreSQL, each may be alternatives separated by |); "" for any index (but never a scan of
	// a whole table).
	SQLite, Postgres string
	List             func(ctx context.Context, r Lister) ([]string, error)
	Want             []string
	// Sorts is set where the list may sort what its index range holds: one message's rows.
	Sorts bool
}

// Cases are the lists of the API, the dashboard and the portal over the shape, each with the
// filters a client sets: ids bounded as hookd.Client bounds them (MessageFilter.FromID, ...).
func (s *Shape) Cases() []Case {
	big, small, ep := s.Apps[0].ID, s.Apps[5].ID, s.Endpoints[0].ID
	old, recent := s.Now.Add(-Span).Add(24*time.Hour), s.Now.Add(-6*time.Hour)
	slack := time.Minute
	msgBefore := func(t time.Time) string { return hookd.MessageIDFloor(t.Add(slack)) }
	msgFrom := func(t time.Time) string { return hookd.MessageIDFloor(t.Add(-slack)) }
	rare := EventTypes[len(EventTypes)-1]
	// PostgreSQL plans a list for its arguments: of the application of half the messages, it may
	// walk the primary key (every other row is the application's) or the creation times' index
	// (a day's range) as well as the application's.
	const bigAppTimes = "hookd_messages_app_id|hookd_messages_pkey|hookd_messages_created_at"

	m0 := s.Messages[len(s.Messages)/2]
	var d0 hookd.Delivery
	for _, d := range s.Deliveries {
		if d.MessageID == m0.ID {
			d0 = d
		}
	}
	msgs := func(f hookd.MessageFilter) func(ctx context.Context, r Lister) ([]string, error) {
		return func(ctx context.Context, r Lister) ([]string, error) {
			p, err := r.ListMessages(ctx, f)
			return ids(p, err, func(m hookd.Message) string { return m.ID })
		}
	}
	dels := func(f hookd.DeliveryFilter) func(ctx context.Context, r Lister) ([]string, error) {
		return func(ctx context.Context, r Lister) ([]string, error) {
			p, err := r.ListDeliveries(ctx, f)
			return ids(p, err, func(d hookd.Delivery) string { return d.ID })
		}
	}
	atts := func(f hookd.AttemptFilter) func(ctx context.Context, r Lister) ([]string, error) {
		return func(ctx context.Context, r Lister) ([]string, error) {
			p, err := r.ListAttempts(ctx, f)
			return ids(p, err, func(a hookd.Attempt) string { return a.ID })
		}
	}
	msgType := make(map[string]hookd.Message, len(s.Messages))
	for _, m := range s.Messages {
		msgType[m.ID] = m
	}
	newestMsgs := func(n int, keep func(m hookd.Message) bool) []string {
		return newest(s.Messages, n, keep, func(m hookd.Message) string { return m.ID })
	}
	oldestDels := func(keep func(d hookd.Delivery) bool) []string {
		var out []string
		for _, d := range s.Deliveries {
			if len(out) < 50 && keep(d) {
				out = append(out, d.ID)
			}
		}
		return out
	}
	newestAtts := func(n int, keep func(a hookd.Attempt) bool) []string {
		return newest(s.Attempts, n, keep, func(a hookd.Attempt) string { return a.ID })
	}
	ofType := func(a hookd.Attempt, types ...string) bool {
		return slices.Contains(types, msgType[a.MessageID].EventType)
	}
	fromAfter := newestMsgs(len(s.Messages), func(m hookd.Message) bool { return m.AppID == big && !m.CreatedAt.Before(recent) })
	fromAfter = fromAfter[max(0, len(fromAfter)-50):]
	rows := []caseRow{
		{"messages", "hookd_messages_app_id", "hookd_messages_app_id|hookd_messages_pkey", msgs(hookd.MessageFilter{AppID: big}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big })},
		{"messages_small_app", "hookd_messages_app_id", "hookd_messages_app_id", msgs(hookd.MessageFilter{AppID: small}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == small })},
		{"messages_before_oldest", "hookd_messages_app_id", bigAppTimes,
			msgs(hookd.MessageFilter{AppID: big, Before: &old, BeforeID: msgBefore(old)}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big && m.CreatedAt.Before(old) })},
		{"messages_after_recent", "hookd_messages_app_id", bigAppTimes,
			msgs(hookd.MessageFilter{AppID: big, After: &recent, FromID: msgFrom(recent)}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big && !m.CreatedAt.Before(recent) })},
		{"messages_from_after_recent", "hookd_messages_app_id", bigAppTimes,
			msgs(hookd.MessageFilter{AppID: big, After: &recent, FromID: msgFrom(recent), FromAfter: true}), fromAfter},
		{"messages_window", "hookd_messages_app_id", bigAppTimes,
			msgs(hookd.MessageFilter{AppID: big, After: &old, FromID: msgFrom(old), Before: &recent, BeforeID: msgBefore(recent)}),
			newestMsgs(50, func(m hookd.Message) bool {
				return m.AppID == big && !m.CreatedAt.Before(old) && m.CreatedAt.Before(recent)
			})},
		{"messages_type_before_oldest", "hookd_messages_app_id_event_type", "hookd_messages_app_id_event_type",
			msgs(hookd.MessageFilter{AppID: big, EventTypes: []string{"type.03"}, Before: &old, BeforeID: msgBefore(old)}),
			newestMsgs(50, func(m hookd.Message) bool {
				return m.AppID == big && m.EventType == "type.03" && m.CreatedAt.Before(old)
			})},
		{"messages_types", "hookd_messages_app_id_event_type", "hookd_messages_app_id_event_type",
			msgs(hookd.MessageFilter{AppID: big, EventTypes: []string{"type.00", rare}}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big && (m.EventType == "type.00" || m.EventType == rare) })},
		{"messages_channel", "PRIMARY KEY", "hookd_message_channels_pkey",
			msgs(hookd.MessageFilter{AppID: big, Channel: "ch.1"}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big && slices.Contains(m.Channels, "ch.1") })},
		{"messages_tag", "PRIMARY KEY", "hookd_message_tags_pkey",
			msgs(hookd.MessageFilter{AppID: big, Tag: "tag.2"}),
			newestMsgs(50, func(m hookd.Message) bool { return m.AppID == big && slices.Contains(m.Tags, "tag.2") })},

		{"deliveries_of_app", "hookd_deliveries_app_id", "hookd_deliveries_app_id_delivered,hookd_deliveries_app_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: small}), oldestDels(func(d hookd.Delivery) bool { return d.AppID == small })},
		{"deliveries_of_app_failed", "hookd_deliveries_app_failed", "hookd_deliveries_app_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: big, Status: hookd.DeliveryFailed}),
			oldestDels(func(d hookd.Delivery) bool { return d.AppID == big && d.Status == hookd.DeliveryFailed })},
		{"deliveries_of_app_failed_after", "hookd_deliveries_app_failed", "hookd_deliveries_app_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: big, Status: hookd.DeliveryFailed, After: &recent, FromID: hookd.DeliveryIDFloor(recent.Add(-slack))}),
			oldestDels(func(d hookd.Delivery) bool {
				return d.AppID == big && d.Status == hookd.DeliveryFailed && !d.CreatedAt.Before(recent)
			})},
		{"deliveries_of_app_cancelled", "hookd_deliveries_app_cancelled", "hookd_deliveries_app_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: small, Status: hookd.DeliveryCancelled}),
			oldestDels(func(d hookd.Delivery) bool { return d.AppID == small && d.Status == hookd.DeliveryCancelled })},
		{"deliveries_of_app_delivered", "hookd_deliveries_app_id", "hookd_deliveries_app_id_delivered",
			dels(hookd.DeliveryFilter{AppID: small, Status: hookd.DeliveryDelivered}),
			oldestDels(func(d hookd.Delivery) bool { return d.AppID == small && d.Status == hookd.DeliveryDelivered })},
		{"deliveries_of_app_pending", "hookd_deliveries_app_pending", "hookd_deliveries_app_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: big, Status: hookd.DeliveryPending}),
			oldestDels(func(d hookd.Delivery) bool { return d.AppID == big && d.Status == hookd.DeliveryPending })},
		{"deliveries_of_endpoint_failed", "hookd_deliveries_endpoint_failed", "hookd_deliveries_endpoint_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: big, EndpointID: ep, Status: hookd.DeliveryFailed}),
			oldestDels(func(d hookd.Delivery) bool { return d.EndpointID == ep && d.Status == hookd.DeliveryFailed })},
		{"deliveries_of_endpoint_unsuccessful", "hookd_deliveries_endpoint_failed,hookd_deliveries_endpoint_cancelled", "hookd_deliveries_endpoint_id_undelivered",
			dels(hookd.DeliveryFilter{EndpointID: ep, Statuses: []hookd.DeliveryStatus{hookd.DeliveryFailed, hookd.DeliveryCancelled}}),
			oldestDels(func(d hookd.Delivery) bool {
				return d.EndpointID == ep && (d.Status == hookd.DeliveryFailed || d.Status == hookd.DeliveryCancelled)
			})},
		{"deliveries_of_endpoint", "hookd_deliveries_endpoint_id", "hookd_deliveries_endpoint_id_delivered|hookd_deliveries_pkey,hookd_deliveries_endpoint_id_undelivered",
			dels(hookd.DeliveryFilter{AppID: big, EndpointID: ep}),
			oldestDels(func(d hookd.Delivery) bool { return d.EndpointID == ep })},
		{"destinations", "sqlite_autoindex_hookd_deliveries_2", "hookd_deliveries_message_id_endpoint_id_key",
			dels(hookd.DeliveryFilter{AppID: m0.AppID, MessageID: m0.ID}),
			oldestDels(func(d hookd.Delivery) bool { return d.MessageID == m0.ID })},

		{"attempts_of_endpoint", "hookd_attempts_endpoint_id", "hookd_attempts_endpoint_id",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep })},
		{"attempts_of_endpoint_failed", "hookd_attempts_endpoint_failed", "hookd_attempts_endpoint_failed",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, Success: new(false)}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep && !a.Success })},
		{"attempts_of_endpoint_succeeded", "hookd_attempts_endpoint_id", "hookd_attempts_endpoint_id",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, Success: new(true)}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep && a.Success })},
		{"attempts_of_endpoint_after", "hookd_attempts_endpoint_id", "hookd_attempts_endpoint_id",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, After: &recent, FromID: hookd.AttemptIDFloor(recent.Add(-slack))}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep && !a.At.Before(recent) })},
		{"attempts_of_endpoint_type", "hookd_attempts_endpoint_event_type", "hookd_attempts_endpoint_event_type",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, EventTypes: []string{"type.04"}}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep && ofType(a, "type.04") })},
		// A rare type: the page reaches back to the attempts recorded before migration 17.
		{"attempts_of_endpoint_rare_types", "hookd_attempts_endpoint_event_type", "hookd_attempts_endpoint_event_type",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, EventTypes: []string{rare, "type.10"}, ListOptions: hookd.ListOptions{Limit: 250}}),
			newestAtts(250, func(a hookd.Attempt) bool { return a.EndpointID == ep && ofType(a, rare, "type.10") })},
		{"attempts_of_endpoint_type_failed", "hookd_attempts_endpoint_event_type", "hookd_attempts_endpoint_event_type|hookd_attempts_endpoint_failed",
			atts(hookd.AttemptFilter{AppID: big, EndpointID: ep, EventTypes: []string{"type.01"}, Success: new(false)}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.EndpointID == ep && ofType(a, "type.01") && !a.Success })},
		{"attempts_of_message", "hookd_attempts_message_id", "hookd_attempts_message_id",
			atts(hookd.AttemptFilter{AppID: m0.AppID, MessageID: m0.ID}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.MessageID == m0.ID })},
		{"attempts_of_delivery", "hookd_attempts_message_id", "hookd_attempts_message_id",
			atts(hookd.AttemptFilter{AppID: d0.AppID, DeliveryID: d0.ID}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.DeliveryID == d0.ID })},
		{"attempts_of_app", "hookd_attempts_app_id", "hookd_attempts_app_id",
			atts(hookd.AttemptFilter{AppID: small}),
			newestAtts(50, func(a hookd.Attempt) bool { return a.AppID == small })},
	}
	cases := make([]Case, len(rows))
	for i, c := range rows {
		cases[i] = Case{Name: c.name, SQLite: c.sqlite, Postgres: c.postgres, List: c.list, Want: c.want,
			Sorts: c.name == "destinations" || c.name == "attempts_of_message" || c.name == "attempts_of_delivery"}
	}
	return cases
}

type caseRow struct {
	name, sqlite, postgres string
	list                   func(ctx context.Context, r Lister) ([]string, error)
	want                   []string
}

// newest returns the ids of the last n rows of rows (in id order) that keep keeps, newest first.
func newest[T any](rows []T, n int, keep func(T) bool, id func(T) string) []string {
	var out []string
	for i := len(rows) - 1; i >= 0 && len(out) < n; i-- {
		if keep(rows[i]) {
			out = append(out, id(rows[i]))
		}
	}
	return out
}

func ids[T any](p *hookd.Page[T], err error, id func(T) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range p.Data {
		out = append(out, id(v))
	}
	return out, nil
}
