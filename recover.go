package hookd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxRecover is the most failed deliveries one recovery queues attempts of, as Svix caps a
// recovery.
const MaxRecover = 10_000

// recoverPage is how many deliveries a recovery reads and queues in one transaction.
const recoverPage = 250

// RecoverInBackground is RecoverRange run in the background, as Svix runs a recovery: it checks
// the application and the endpoint (missing: ErrNotFound; disabled: ErrEndpointDisabled) and
// returns, and the attempts are queued afterwards. The recovery lives as long as the started
// client: Stop ends it, and the attempts it queued so far stay queued. On a client not started
// it runs before RecoverInBackground returns.
func (c *Client) RecoverInBackground(ctx context.Context, app, endpoint string, since time.Time, until *time.Time) error {
	ep, err := c.recoverTarget(ctx, app, endpoint)
	if err != nil {
		return err
	}
	c.mu.Lock()
	bg := c.bgCtx
	if bg != nil {
		c.bg.Add(1)
	}
	c.mu.Unlock()
	if bg == nil {
		_, err := c.recoverPages(ctx, ep, since, until)
		return err
	}
	go func() {
		defer c.bg.Done()
		if _, err := c.recoverPages(bg, ep, since, until); err != nil && bg.Err() == nil {
			c.cfg.Logger.Error("recover endpoint", "endpoint", ep.ID, "error", err)
		}
	}()
	return nil
}

// recoverTarget returns the endpoint a recovery works on: an enabled endpoint of the application.
func (c *Client) recoverTarget(ctx context.Context, app, endpoint string) (*Endpoint, error) {
	a, err := c.GetApplication(ctx, app)
	if err != nil {
		return nil, err
	}
	ep, err := c.store.GetEndpoint(ctx, a.ID, endpoint)
	if err != nil {
		return nil, fmt.Errorf("hookd: recover endpoint %q: %w", endpoint, err)
	}
	if ep.Disabled {
		return nil, fmt.Errorf("hookd: recover endpoint %q: %w: enable endpoint %s first", endpoint, ErrEndpointDisabled, ep.ID)
	}
	return ep, nil
}

// recoverPages queues a manual attempt of each failed delivery to ep created in [since, until)
// (on an ordered endpoint, makes it pending again with one more scheduled attempt), in id order, a page a transaction, at most MaxRecover of them, and returns how many it queued.
func (c *Client) recoverPages(ctx context.Context, ep *Endpoint, since time.Time, until *time.Time) (int, error) {
	f := DeliveryFilter{AppID: ep.AppID, EndpointID: ep.ID, Status: DeliveryFailed, After: &since, Before: until}
	n := 0
	for done := false; !done && n < MaxRecover; {
		f.Limit = min(recoverPage, MaxRecover-n)
		err := c.store.InTx(ctx, func(tx Tx) error {
			page, err := tx.ListDeliveries(ctx, f)
			if err != nil {
				return err
			}
			jobs := make([]Job, 0, len(page.Data))
			now := c.now()
			for _, d := range page.Data {
				if ep.Ordered {
					// Pending again, it takes its place by id: attempted once it is the head.
					if err := tx.SetDeliveryStatus(ctx, d.ID, DeliveryPending, &now, d.LastError, now); err != nil {
						return err
					}
					jobs = append(jobs, Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: TriggerScheduled})
					continue
				}
				jobs = append(jobs, Job{DeliveryID: d.ID, Attempt: d.Attempts + 1, Trigger: TriggerManual})
			}
			if len(jobs) > 0 {
				if err := c.queue.EnqueueTx(ctx, tx, jobs); err != nil {
					return err
				}
			}
			n += len(jobs)
			done, f.Iterator = page.Done, page.Iterator
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("hookd: recover endpoint %s: %w", ep.ID, err)
		}
	}
	return n, nil
}

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
				ID: c.newID(prefixDelivery), MessageID: m.ID, EndpointID: ep.ID, AppID: a.ID,
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

// RecoverRange is Recover for the failed deliveries created at or after since and, when until is
// set, before until. It queues at most MaxRecover attempts, a page of deliveries a transaction.
func (c *Client) RecoverRange(ctx context.Context, app, endpoint string, since time.Time, until *time.Time) (int, error) {
	ep, err := c.recoverTarget(ctx, app, endpoint)
	if err != nil {
		return 0, err
	}
	return c.recoverPages(ctx, ep, since, until)
}
