package hookd

import (
	"context"
	"fmt"
)

// sendInTx writes m for app inside tx, alone: staged, then flushed (admitted: see stageMessage).
func (c *Client) sendInTx(ctx context.Context, tx Tx, app string, m *Message, admitted *bool) (*SendResult, error) {
	w := newStagedSends(tx)
	res, err := c.stageMessage(ctx, w, app, m, admitted)
	if err != nil {
		return nil, err
	}
	if err := c.flushSends(ctx, w); err != nil {
		return nil, err
	}
	return res, nil
}

// stagedSends is what the sends of one transaction write together: each application and its
// enabled endpoints are read once, and the deliveries and jobs of every message staged are
// inserted at the end in one statement each (flushSends).
type stagedSends struct {
	tx         Tx
	apps       map[string]*Application // by the id or uid the sends named
	endpoints  map[string][]Endpoint   // enabled endpoints by application id
	deliveries []Delivery
	jobs       []Job
}

func newStagedSends(tx Tx) *stagedSends {
	return &stagedSends{tx: tx, apps: map[string]*Application{}, endpoints: map[string][]Endpoint{}}
}

// stageMessage writes m for app in w's transaction and adds its deliveries and their jobs to w,
// for flushSends to insert with those of the other sends. Unless *admitted, the message first
// takes its place in the application's message rate (a *RateLimitError, before any write, when
// there is none), and *admitted is set.
func (c *Client) stageMessage(ctx context.Context, w *stagedSends, app string, m *Message, admitted *bool) (*SendResult, error) {
	a := w.apps[app]
	if a == nil {
		var err error
		if a, err = w.tx.GetApplication(ctx, app); err != nil {
			return nil, fmt.Errorf("hookd: send to application %q: %w", app, err)
		}
		w.apps[app] = a
	}
	if !*admitted {
		if err := c.rates.take(a.ID); err != nil {
			return nil, fmt.Errorf("hookd: send to application %q: %w", app, err)
		}
		*admitted = true
	}
	m.AppID = a.ID
	existing, inserted, err := w.tx.InsertMessage(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("hookd: send: %w", err)
	}
	if !inserted {
		return &SendResult{Message: existing, Duplicate: true}, nil
	}
	eps, ok := w.endpoints[a.ID]
	if !ok {
		if eps, err = w.tx.EnabledEndpoints(ctx, a.ID); err != nil {
			return nil, fmt.Errorf("hookd: send: %w", err)
		}
		w.endpoints[a.ID] = eps
	}
	n := 0
	for i := range eps {
		if !matches(&eps[i], m.EventType, m.Channels) {
			continue
		}
		d := Delivery{
			ID: newID(prefixDelivery), MessageID: m.ID, EndpointID: eps[i].ID, AppID: a.ID,
			Status: DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt,
		}
		w.deliveries = append(w.deliveries, d)
		w.jobs = append(w.jobs, Job{DeliveryID: d.ID, Attempt: 1, Trigger: TriggerScheduled})
		n++
	}
	return &SendResult{Message: m, Deliveries: n}, nil
}

// flushSends inserts the deliveries staged in w and enqueues their jobs.
func (c *Client) flushSends(ctx context.Context, w *stagedSends) error {
	if len(w.deliveries) > 0 {
		if err := w.tx.InsertDeliveries(ctx, w.deliveries); err != nil {
			return fmt.Errorf("hookd: send: %w", err)
		}
	}
	if len(w.jobs) == 0 {
		return nil
	}
	if err := c.queue.EnqueueTx(ctx, w.tx, w.jobs); err != nil {
		return fmt.Errorf("hookd: send: enqueue: %w", err)
	}
	return nil
}
