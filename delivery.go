package hookd

import (
	"context"
	"errors"
	"fmt"
)

// What the HTTP API (package server) needs of messages and attempts beyond the rest of the Client.

// ExpungeMessageContent deletes the payload of a message of an application (by id or event id),
// as Svix's expunge content does: the message then reads back with a nil Payload and should not be
// resent.
func (c *Client) ExpungeMessageContent(ctx context.Context, app, msg string) error {
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		m, err := tx.GetMessage(ctx, a.ID, msg)
		if err != nil {
			return err
		}
		return tx.ExpungeMessagePayload(ctx, m.ID)
	})
	if err != nil {
		return fmt.Errorf("hookd: expunge content of message %q: %w", msg, err)
	}
	return nil
}

// GetAttempt returns an attempt of a message (by id or event id) of an application. An attempt of
// another message is ErrNotFound.
func (c *Client) GetAttempt(ctx context.Context, app, msg, attempt string) (*Attempt, error) {
	m, err := c.GetMessage(ctx, app, msg)
	if err != nil {
		return nil, err
	}
	a, err := c.store.GetAttempt(ctx, attempt)
	if err == nil && (a.MessageID != m.ID || a.AppID != m.AppID) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("hookd: get attempt %q of message %q: %w", attempt, msg, err)
	}
	return a, nil
}

// ExpungeAttemptContent replaces the response body captured by an attempt of a message (by id or
// event id) of an application with ExpungedResponse. An attempt of another message is ErrNotFound.
func (c *Client) ExpungeAttemptContent(ctx context.Context, app, msg, attempt string) error {
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		m, err := tx.GetMessage(ctx, a.ID, msg)
		if err != nil {
			return err
		}
		at, err := tx.GetAttempt(ctx, attempt)
		if err != nil {
			return err
		}
		if at.MessageID != m.ID || at.AppID != a.ID {
			return ErrNotFound
		}
		return tx.ExpungeAttemptResponse(ctx, at.ID)
	})
	if err != nil {
		return fmt.Errorf("hookd: expunge content of attempt %q: %w", attempt, err)
	}
	return nil
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
	out := &Page[EndpointMessage]{Iterator: ds.Iterator, PrevIterator: ds.PrevIterator, Done: ds.Done}
	out.Data = make([]EndpointMessage, 0, len(ds.Data))
	for _, d := range ds.Data {
		m, err := c.store.GetMessage(ctx, a.ID, d.MessageID)
		if err != nil {
			return nil, fmt.Errorf("hookd: list messages of endpoint %q: %w", endpoint, err)
		}
		out.Data = append(out.Data, EndpointMessage{Delivery: d, Message: *m})
	}
	return out, nil
}
