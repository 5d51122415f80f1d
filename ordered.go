package hookd

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Ordered endpoints (Endpoint.Ordered) take their deliveries one at a time in id order, which is
// the order hookd accepted the messages (ids sort by creation time; see id.go).
//
//   - The head is the endpoint's pending delivery with the lowest id (Store.FirstPendingDelivery).
//   - A scheduled job of another pending delivery parks it: the delivery stays pending with no job
//     and no next attempt time (Store.ParkDelivery), and the job ends without an attempt.
//   - Whatever ends a delivery of the endpoint (delivered, failed, cancelled) advances, in the same
//     transaction: when the new head is parked, it gets its next attempt time back and a job.
//     A head that is not parked has a job of its own: its first, or its retry.
//   - Parking and advancing exclude each other (Store.LockFirstPending): a delivery is parked
//     only while an earlier one is pending, and an advance that follows sees it parked.
//   - At most one attempt to the endpoint is in flight across every process: its cap is 1
//     (Client.limits), a slot leased from the fleet where there are several (fleet_slots.go).
//
// Since parking and advancing are writes in the transactions that also write the delivery's
// state, a crash anywhere leaves either the head's job or the record that queued it: the order
// holds, and nothing is left behind, across processes and crashes.

// unparkPage is how many parked deliveries one statement reads when they are all queued again.
const unparkPage = 250

// parkBehind parks d when an earlier delivery to its ordered endpoint ep is pending. It reports
// whether the job ends here (d parked, or the job snoozed because the store refused the park),
// with the error the job ends with.
func (c *Client) parkBehind(ctx context.Context, d *Delivery, ep *Endpoint) (bool, error) {
	head, err := c.store.FirstPendingDelivery(ctx, ep.ID)
	if errors.Is(err, ErrNotFound) {
		return false, nil // d ended meanwhile; its record's write sorts that out
	}
	if err != nil {
		return true, err
	}
	if head.ID >= d.ID {
		// d is the head. The write that ended the one before it may also have disabled the
		// endpoint (a 410) after this job read it from the cache: read it again, so that nothing
		// is sent behind a 410. That write committed before the read of the head above.
		fresh, err := c.store.GetEndpointByID(ctx, ep.ID)
		if errors.Is(err, ErrNotFound) {
			return true, c.cancelDelivery(ctx, d, "endpoint deleted", false, ep.ID)
		}
		if err != nil {
			return true, err
		}
		if fresh.Disabled {
			c.states.invalidate(ep.ID)
			return true, c.cancelDelivery(ctx, d, "endpoint disabled", false, ep.ID)
		}
		return false, nil
	}
	if d.NextAttemptAt == nil {
		return true, nil // parked already: this job repeats one that parked it
	}
	parked := false
	err = c.rec.do(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		parked, err = tx.ParkDelivery(ctx, d.ID, ep.ID, c.now())
		return err
	})
	if err != nil {
		return true, err
	}
	if !parked {
		// The earlier deliveries ended meanwhile, or the endpoint is no longer ordered (or is
		// gone): run the job again on fresh reads.
		c.states.invalidate(ep.ID)
		return true, Snooze(time.Millisecond, "the endpoint's order changed")
	}
	return true, nil
}

// advance returns the job to queue in tx for the endpoint's head, once a delivery has ended: the
// next delivery in order, when it is parked, given its next attempt time back and a job not
// before wait from now. A head that is not parked has its own job; with no pending delivery there
// is no head. Either way it returns nil.
func (c *Client) advance(ctx context.Context, tx Tx, endpointID string, wait time.Duration) (*Job, error) {
	head, err := tx.LockFirstPending(ctx, endpointID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil || head.NextAttemptAt != nil {
		return nil, err
	}
	now := c.now()
	if err := tx.SetDeliveryStatus(ctx, head.ID, DeliveryPending, &now, head.LastError, now); err != nil {
		return nil, err
	}
	// The queue runs on real time; Config.Now only stamps records.
	return &Job{DeliveryID: head.ID, Attempt: head.Attempts + 1, Trigger: TriggerScheduled, NotBefore: time.Now().Add(wait), Wake: true}, nil
}

// advanceAll returns the jobs of the heads of endpointIDs (each once), as advance does.
func (c *Client) advanceAll(ctx context.Context, tx Tx, endpointIDs []string, wait time.Duration) ([]Job, error) {
	var jobs []Job
	seen := make(map[string]bool, len(endpointIDs))
	for _, id := range slices.Sorted(slices.Values(endpointIDs)) { // locks in one order in every process
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		job, err := c.advance(ctx, tx, id, wait)
		if err != nil {
			return nil, err
		}
		if job != nil {
			jobs = append(jobs, *job)
		}
	}
	return jobs, nil
}

// unparkAll queues, in tx, a job for every parked delivery to the endpoint and gives each its
// next attempt time back: the endpoint stopped being ordered.
func (c *Client) unparkAll(ctx context.Context, tx Tx, endpointID string, now time.Time) error {
	for after := ""; ; {
		ds, err := tx.ParkedDeliveries(ctx, endpointID, after, unparkPage)
		if err != nil {
			return err
		}
		jobs := make([]Job, 0, len(ds))
		for _, d := range ds {
			if err := tx.SetDeliveryStatus(ctx, d.ID, DeliveryPending, &now, d.LastError, now); err != nil {
				return err
			}
			jobs = append(jobs, Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: TriggerScheduled, Wake: true})
		}
		if len(jobs) > 0 {
			if err := c.queue.EnqueueTx(ctx, tx, jobs); err != nil {
				return err
			}
		}
		if len(ds) < unparkPage {
			return nil
		}
		after = ds[len(ds)-1].ID
	}
}

// orderedID returns the id of d's endpoint when ending d must advance it: the endpoint is
// ordered, it is gone (its parked deliveries are then cancelled one after another), or it cannot
// be read now (a job too many is dropped; one too few would leave the endpoint stuck). Else "".
func (c *Client) orderedID(ctx context.Context, d *Delivery) string {
	ep, _, err := c.endpoint(ctx, d.EndpointID, c.now())
	if err != nil || ep.Ordered {
		return d.EndpointID
	}
	return ""
}

// orderedIDOf is orderedID for an endpoint already read.
func orderedIDOf(ep *Endpoint) string {
	if ep.Ordered {
		return ep.ID
	}
	return ""
}
