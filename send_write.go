package hookd

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// sendInTx writes m for app inside tx, alone (admitted: see writeSends).
func (c *Client) sendInTx(ctx context.Context, tx Tx, app string, m *Message, admitted *bool) (*SendResult, error) {
	it := &pendingSend{app: app, msg: m, admitted: *admitted}
	err := c.writeSends(ctx, tx, []*pendingSend{it})
	*admitted = it.admitted
	if err != nil {
		return nil, err
	}
	return it.res, it.err
}

// writeSends writes the messages of sends in tx, together: the applications named and their
// enabled endpoints read once, the messages inserted in one go, then the deliveries of every
// message written and their jobs in one statement each, held for the commit where the store can
// hold them. A send refused before any write (an unknown application; a *RateLimitError when the
// application's message rate has no place for it) gets its error in its err and the others go on;
// an error returned fails them all. Each send's res is set when it is written; a send not yet
// admitted takes its place in the message rate first, and is then marked admitted, so that
// writing it again after its batch failed does not take a second.
func (c *Client) writeSends(ctx context.Context, tx Tx, sends []*pendingSend) error {
	w := batchWriter(tx)
	names := make([]string, 0, 1)
	for _, it := range sends {
		if !slices.Contains(names, it.app) {
			names = append(names, it.app)
		}
	}
	apps, endpoints, err := w.SendTargets(ctx, names)
	if err != nil {
		return fmt.Errorf("hookd: send: %w", err)
	}
	msgs := make([]*Message, 0, len(sends))
	written := make([]*pendingSend, 0, len(sends))
	for _, it := range sends {
		a := apps[it.app]
		if a == nil {
			it.err = fmt.Errorf("hookd: send to application %q: get application %s: %w", it.app, it.app, ErrNotFound)
			continue
		}
		if !it.admitted {
			if err := c.rates.take(a.ID); err != nil {
				it.err = fmt.Errorf("hookd: send to application %q: %w", it.app, err)
				continue
			}
			it.admitted = true
		}
		it.msg.AppID = a.ID
		msgs = append(msgs, it.msg)
		written = append(written, it)
	}
	if len(msgs) == 0 {
		return nil
	}
	existing, err := w.InsertMessages(ctx, msgs)
	if err != nil {
		return fmt.Errorf("hookd: send: %w", err)
	}
	var deliveries []Delivery
	var jobs []Job
	for i, it := range written {
		if existing[i] != nil {
			it.res = &SendResult{Message: existing[i], Duplicate: true}
			continue
		}
		m, eps, n := it.msg, endpoints[it.msg.AppID], 0
		for j := range eps {
			if !matches(&eps[j], m.EventType, m.Channels) {
				continue
			}
			d := Delivery{
				ID: c.newID(prefixDelivery), MessageID: m.ID, EndpointID: eps[j].ID, AppID: m.AppID,
				Status: DeliveryPending, NextAttemptAt: &m.CreatedAt, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt,
			}
			deliveries = append(deliveries, d)
			jobs = append(jobs, Job{DeliveryID: d.ID, Attempt: 1, Trigger: TriggerScheduled})
			n++
		}
		it.res = &SendResult{Message: m, Deliveries: n}
	}
	w.HoldWrites()
	if len(deliveries) > 0 {
		if err := tx.InsertDeliveries(ctx, deliveries); err != nil {
			return fmt.Errorf("hookd: send: %w", err)
		}
		c.noteUnworked(deliveries[0].ID)
	}
	if len(jobs) > 0 {
		if err := c.queue.EnqueueTx(ctx, tx, jobs); err != nil {
			return fmt.Errorf("hookd: send: enqueue: %w", err)
		}
	}
	return nil
}

// refusedBeforeWrite reports whether err is one writeSends gives a send it did not write: its
// batch may go on without it, and writing it again alone gives the same.
func refusedBeforeWrite(err error) bool {
	return errors.Is(err, ErrRateLimited) || errors.Is(err, ErrNotFound)
}

// batchWriter returns tx's MessageBatchWriter, or one that writes through tx's Reader and Writer
// methods, a message at a time.
func batchWriter(tx Tx) MessageBatchWriter {
	if w, ok := tx.(MessageBatchWriter); ok {
		return w
	}
	return oneByOne{tx}
}

// oneByOne is a MessageBatchWriter on any Tx: a statement or more per application and per message.
type oneByOne struct{ tx Tx }

func (o oneByOne) SendTargets(ctx context.Context, names []string) (map[string]*Application, map[string][]Endpoint, error) {
	apps, endpoints := make(map[string]*Application, len(names)), make(map[string][]Endpoint, len(names))
	for _, name := range names {
		a, err := o.tx.GetApplication(ctx, name)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		apps[name] = a
		if _, ok := endpoints[a.ID]; ok {
			continue
		}
		if endpoints[a.ID], err = o.tx.EnabledEndpoints(ctx, a.ID); err != nil {
			return nil, nil, err
		}
	}
	return apps, endpoints, nil
}

func (o oneByOne) InsertMessages(ctx context.Context, msgs []*Message) ([]*Message, error) {
	existing := make([]*Message, len(msgs))
	for i, m := range msgs {
		first, inserted, err := o.tx.InsertMessage(ctx, m)
		if err != nil {
			return nil, err
		}
		if !inserted {
			existing[i] = first
		}
	}
	return existing, nil
}

func (oneByOne) HoldWrites() {}
