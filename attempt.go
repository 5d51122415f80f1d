package hookd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// GetMessage returns a message of an application by id or event id.
func (c *Client) GetMessage(ctx context.Context, app, msg string) (*Message, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	m, err := c.store.GetMessage(ctx, a.ID, msg)
	if err != nil {
		return nil, fmt.Errorf("hookd: get message %q: %w", msg, err)
	}
	return m, nil
}

// GetMessages returns the messages of an application with ids (message ids, not event ids) that
// exist, by id. On a store that reads them in one statement (both of this module's do) it is one
// read; otherwise one GetMessage a message.
func (c *Client) GetMessages(ctx context.Context, app string, ids []string) (map[string]Message, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	if br, ok := c.store.(MessageBatchReader); ok {
		out, err := br.GetMessagesByID(ctx, a.ID, ids)
		if err != nil {
			return nil, fmt.Errorf("hookd: get messages: %w", err)
		}
		return out, nil
	}
	out := make(map[string]Message)
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue // several deliveries of one message
		}
		m, err := c.store.GetMessage(ctx, a.ID, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("hookd: get message %q: %w", id, err)
		}
		if m.ID == id { // not a message whose event id is id
			out[id] = *m
		}
	}
	return out, nil
}

// ListMessages lists an application's messages, newest first. f.AppID is set from app.
func (c *Client) ListMessages(ctx context.Context, app string, f MessageFilter) (*Page[Message], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	return c.store.ListMessages(ctx, f)
}

// ListDeliveries lists deliveries, oldest first. f.AppID is set from app.
func (c *Client) ListDeliveries(ctx context.Context, app string, f DeliveryFilter) (*Page[Delivery], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	return c.store.ListDeliveries(ctx, f)
}

// ListAttempts lists attempts, newest first. f.AppID is set from app.
func (c *Client) ListAttempts(ctx context.Context, app string, f AttemptFilter) (*Page[Attempt], error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f.AppID = a.ID
	return c.store.ListAttempts(ctx, f)
}

// ListOperationalEvents lists operational events, oldest first.
func (c *Client) ListOperationalEvents(ctx context.Context, opts ListOptions) (*Page[OperationalEvent], error) {
	return c.store.ListOperationalEvents(ctx, opts)
}

// ErrEndpointDisabled: a manual attempt was asked of a disabled endpoint.
var ErrEndpointDisabled = errors.New("endpoint disabled")

// ErrPayloadMissing: a manual attempt was asked of a message whose payload expired or was
// expunged.
var ErrPayloadMissing = errors.New("message payload missing (expired or expunged)")

// Resend makes one manual attempt of a message to an endpoint, whatever became of its delivery
// (a delivery is created when the endpoint did not take the message before). It returns when the
// attempt is queued.
func (c *Client) Resend(ctx context.Context, app, msg, endpoint string) error {
	err := c.inApp(ctx, app, func(tx Tx, a *Application) error {
		m, err := tx.GetMessage(ctx, a.ID, msg)
		if err != nil {
			return err
		}
		if m.Payload == nil {
			return ErrPayloadMissing
		}
		ep, err := tx.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return err
		}
		if ep.Disabled {
			return fmt.Errorf("%w: enable endpoint %s first", ErrEndpointDisabled, ep.ID)
		}
		d, err := tx.GetDeliveryFor(ctx, m.ID, ep.ID)
		if errors.Is(err, ErrNotFound) {
			now := c.now()
			d = &Delivery{
				ID: newID(prefixDelivery), MessageID: m.ID, EndpointID: ep.ID, AppID: a.ID,
				Status: DeliveryFailed, CreatedAt: now, UpdatedAt: now,
			}
			err = tx.InsertDeliveries(ctx, []Delivery{*d})
		}
		if err != nil {
			return err
		}
		return c.queue.EnqueueTx(ctx, tx, []Job{{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: TriggerManual}})
	})
	if err != nil {
		return fmt.Errorf("hookd: resend %q to %q: %w", msg, endpoint, err)
	}
	return nil
}

// Recover makes a manual attempt of every failed delivery to an endpoint created at or after
// since, at most MaxRecover of them, and returns how many it queued.
func (c *Client) Recover(ctx context.Context, app, endpoint string, since time.Time) (int, error) {
	return c.RecoverRange(ctx, app, endpoint, since, nil)
}

// AttemptsPerHour counts the attempts to an application's endpoints (or to one of them, endpoint
// not empty), made since since, by the hour (UTC) they were made in, oldest first; hours without
// attempts are left out.
func (c *Client) AttemptsPerHour(ctx context.Context, app, endpoint string, since time.Time) ([]HourCount, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f := AttemptStatsFilter{AppID: a.ID, Since: since.UTC(), FromID: AttemptIDFloor(since)}
	if endpoint != "" {
		ep, err := c.GetEndpoint(ctx, a.ID, endpoint)
		if err != nil {
			return nil, err
		}
		f.EndpointID = ep.ID
	}
	out, err := c.store.AttemptsPerHour(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("hookd: attempts per hour: %w", err)
	}
	return out, nil
}

// AttemptsByEndpoint counts the attempts to each of an application's endpoints named by
// endpointIDs (their ids, as listed), made since since; endpoints without attempts are left out.
// On a store that counts them in one statement (both of this module's do) it is one read;
// otherwise one AttemptsPerHour an endpoint.
func (c *Client) AttemptsByEndpoint(ctx context.Context, app string, endpointIDs []string, since time.Time) (map[string]AttemptCount, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	f := AttemptStatsFilter{AppID: a.ID, Since: since.UTC(), FromID: AttemptIDFloor(since)}
	if ec, ok := c.store.(EndpointAttemptCounter); ok {
		out, err := ec.AttemptsByEndpoint(ctx, f, endpointIDs)
		if err != nil {
			return nil, fmt.Errorf("hookd: attempts by endpoint: %w", err)
		}
		return out, nil
	}
	out := make(map[string]AttemptCount)
	for _, id := range endpointIDs {
		f.EndpointID = id
		hours, err := c.store.AttemptsPerHour(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("hookd: attempts by endpoint: %w", err)
		}
		if n := SumHours(hours); n != (AttemptCount{}) {
			out[id] = n
		}
	}
	return out, nil
}

// CircuitOpen reports whether this process's circuit breaker holds back the attempts to the
// endpoint with id endpointID (each process keeps its own).
func (c *Client) CircuitOpen(endpointID string) bool {
	return c.states.circuitOpen(endpointID, c.now())
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
