package hookd

import (
	"context"
	"fmt"
)

// sendIn writes m for app inside tx, with its jobs (admitted: see writeMessage).
func (c *Client) sendIn(ctx context.Context, tx Tx, app string, m *Message, admitted *bool) (*SendResult, error) {
	w := newSendWrite(tx)
	res, err := c.writeMessage(ctx, w, app, m, admitted)
	if err != nil {
		return nil, err
	}
	if err := c.finishSends(ctx, w); err != nil {
		return nil, err
	}
	return res, nil
}

// sendWrite is what the sends of one transaction write together: each application and its
// enabled endpoints are read once, and the deliveries and jobs of every message are inserted at
// the end in one statement each (finishSends).
type sendWrite struct {
	tx         Tx
	apps       map[string]*Application // by the id or uid the sends named
	endpoints  map[string][]Endpoint   // enabled endpoints by application id
	deliveries []Delivery
	jobs       []Job
}

func newSendWrite(tx Tx) *sendWrite {
	return &sendWrite{tx: tx, apps: map[string]*Application{}, endpoints: map[string][]Endpoint{}}
}

// writeMessage writes m for app in w's transaction and adds its deliveries and their jobs to w,
// for finishSends to insert with those of the other sends. Unless *admitted, the message first
// takes its place in the application's message rate (a *RateLimitError, before any write, when
// there is none), and *admitted is set.
func (c *Client) writeMessage(ctx context.Context, w *sendWrite, app string, m *Message, admitted *bool) (*SendResult, error) {
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

// finishSends inserts the deliveries of w's messages and enqueues their jobs.
func (c *Client) finishSends(ctx context.Context, w *sendWrite) error {
	if len(w.deliveries) > 0 {
		if err := w.tx.InsertDeliveries(ctx, w.deliveries); err != nil {
			return fmt.Errorf("hookd: send: %w", err)
		}
	}
	return c.enqueue(ctx, w.tx, w.jobs)
}

// enqueue inserts the jobs of sends in tx.
func (c *Client) enqueue(ctx context.Context, tx Tx, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	if err := c.queue.EnqueueTx(ctx, tx, jobs); err != nil {
		return fmt.Errorf("hookd: send: enqueue: %w", err)
	}
	return nil
}
