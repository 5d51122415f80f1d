package hookd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"   // attempts remain
	DeliveryDelivered DeliveryStatus = "delivered" // a 2xx arrived
	DeliveryFailed    DeliveryStatus = "failed"    // the schedule ran out
	DeliveryCancelled DeliveryStatus = "cancelled" // the endpoint was disabled, deleted, or answered 410
)

// Delivery is one message on its way to one endpoint.
type Delivery struct {
	ID            string // "dlv_..."
	MessageID     string
	EndpointID    string
	AppID         string
	Status        DeliveryStatus
	Attempts      int        // scheduled attempts made; manual attempts are logged but not counted
	NextAttemptAt *time.Time // when the next scheduled attempt is due; nil when none is
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ListDeliveries lists deliveries, oldest first. f.AppID is set from app.
func (c *Client) ListDeliveries(ctx context.Context, app string, f DeliveryFilter) (*Page[Delivery], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	f.FromID, _ = c.idBounds(prefixDelivery, f.After, nil)
	return c.store.ListDeliveries(ctx, f)
}

// DeliveryCounts counts the deliveries of each message of ids (message ids) of an application by
// status; a message without deliveries is left out. On a store that counts them in one
// statement (both of this module's do) it is one read; otherwise a list a message.
func (c *Client) DeliveryCounts(ctx context.Context, app string, ids []string) (map[string]DeliveryCounts, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	if dc, ok := c.store.(DeliveryCounter); ok {
		out, err := dc.DeliveryCountsByMessage(ctx, a.ID, ids)
		if err != nil {
			return nil, fmt.Errorf("hookd: count deliveries: %w", err)
		}
		return out, nil
	}
	out := make(map[string]DeliveryCounts)
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		f := DeliveryFilter{AppID: a.ID, MessageID: id, ListOptions: ListOptions{Limit: 250}} // 250: the longest page
		for {
			page, err := c.store.ListDeliveries(ctx, f)
			if err != nil {
				return nil, fmt.Errorf("hookd: count deliveries of %q: %w", id, err)
			}
			for _, d := range page.Data {
				n := out[id]
				n.Add(d.Status, 1)
				out[id] = n
			}
			if page.Done || page.Iterator == "" {
				break
			}
			f.Iterator = page.Iterator
		}
	}
	return out, nil
}

// MessageDestination is one delivery of a message with the endpoint it goes to.
type MessageDestination struct {
	Delivery Delivery
	Endpoint *Endpoint // nil when the endpoint has been deleted since
}

// ListMessageDestinations lists the deliveries of a message (by id or event id) of an application,
// each with its endpoint, paged as ListDeliveries pages.
func (c *Client) ListMessageDestinations(ctx context.Context, app, msg string, opts ListOptions) (*Page[MessageDestination], error) {
	m, err := c.GetMessage(ctx, app, msg)
	if err != nil {
		return nil, err
	}
	ds, err := c.store.ListDeliveries(ctx, DeliveryFilter{AppID: m.AppID, MessageID: m.ID, ListOptions: opts})
	if err != nil {
		return nil, fmt.Errorf("hookd: list destinations of message %q: %w", msg, err)
	}
	out := &Page[MessageDestination]{Iterator: ds.Iterator, PrevIterator: ds.PrevIterator, Done: ds.Done}
	out.Data = make([]MessageDestination, 0, len(ds.Data))
	for _, d := range ds.Data {
		ep, err := c.store.GetEndpoint(ctx, m.AppID, d.EndpointID)
		if errors.Is(err, ErrNotFound) {
			ep, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("hookd: list destinations of message %q: %w", msg, err)
		}
		out.Data = append(out.Data, MessageDestination{Delivery: d, Endpoint: ep})
	}
	return out, nil
}

// EndpointMessage is one delivery to an endpoint with the message it carries.
type EndpointMessage struct {
	Delivery Delivery
	Message  Message
}

// ListEndpointMessages lists the deliveries to an endpoint (by id or uid) of an application, each
// with its message, paged as ListDeliveries pages. f.AppID and f.EndpointID are set from app and
// endpoint.
func (c *Client) ListEndpointMessages(ctx context.Context, app, endpoint string, f DeliveryFilter) (*Page[EndpointMessage], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	ep, err := c.store.GetEndpoint(ctx, a.ID, endpoint)
	if err != nil {
		return nil, fmt.Errorf("hookd: list messages of endpoint %q: %w", endpoint, err)
	}
	f.AppID, f.EndpointID = a.ID, ep.ID
	ds, err := c.store.ListDeliveries(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("hookd: list messages of endpoint %q: %w", endpoint, err)
	}
	ids := make([]string, len(ds.Data))
	for i, d := range ds.Data {
		ids[i] = d.MessageID
	}
	msgs, err := c.messagesByID(ctx, a.ID, ids)
	if err != nil {
		return nil, fmt.Errorf("hookd: list messages of endpoint %q: %w", endpoint, err)
	}
	out := &Page[EndpointMessage]{Iterator: ds.Iterator, PrevIterator: ds.PrevIterator, Done: ds.Done}
	out.Data = make([]EndpointMessage, 0, len(ds.Data))
	for _, d := range ds.Data {
		// A delivery goes with its message: one whose message is gone was deleted with it
		// (retention) after the list was read.
		if m, ok := msgs[d.MessageID]; ok {
			out.Data = append(out.Data, EndpointMessage{Delivery: d, Message: m})
		}
	}
	return out, nil
}

// PendingEndpoint is one endpoint's backlog: its deliveries still pending, for metrics.
type PendingEndpoint struct {
	EndpointID string
	AppID      string
	Pending    int       // deliveries pending, at least 1
	Oldest     time.Time // CreatedAt of the oldest of them
}
