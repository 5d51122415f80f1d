package hookd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hookd/hookd/delivery"
)

// work makes the attempt a job asks for. It is the queue's JobHandler.
func (c *Client) work(ctx context.Context, job Job) error {
	release, err := c.active[job.Lane()].acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	c.working.Add(1)
	defer c.working.Add(-1)
	return c.workJob(ctx, job)
}

// workJob works one job.
func (c *Client) workJob(ctx context.Context, job Job) error {
	d, m, err := c.loadWork(ctx, job.DeliveryID)
	if errors.Is(err, ErrNotFound) {
		return nil // the message was deleted with its application
	}
	if err != nil {
		return fmt.Errorf("load delivery %s: %w", job.DeliveryID, err)
	}
	manual := job.Trigger == TriggerManual
	if !manual && (d.Status != DeliveryPending || job.Attempt != d.Attempts+1) {
		return nil // no longer pending, or a stale job whose attempt was already made
	}
	if m.Payload == nil {
		// Expired or expunged: there is nothing to send (Svix's worker skips it too).
		return c.cancelDelivery(ctx, d, "payload expired", manual, c.orderedID(ctx, d))
	}
	now := c.now()
	ep, keys, err := c.endpoint(ctx, d.EndpointID, now)
	if errors.Is(err, ErrNotFound) {
		return c.cancelDelivery(ctx, d, "endpoint deleted", manual, d.EndpointID)
	}
	if err != nil {
		return err
	}
	if ep.Disabled {
		return c.cancelDelivery(ctx, d, "endpoint disabled", manual, orderedIDOf(ep))
	}
	if !manual && ep.Ordered {
		if done, err := c.parkBehind(ctx, d, ep); done {
			return err
		}
	}

	adm, now := c.admit(ctx, ep, now, manual)
	if adm.notSent != "" {
		return c.recordAttempt(ctx, madeAttempt{job: job, d: d, m: m, ep: ep, adm: adm, at: now,
			res: &delivery.Result{Outcome: delivery.Failure, Err: errCircuitOpen}})
	}
	if adm.wait > 0 {
		c.snoozed.Add(1)
		return Snooze(adm.wait, adm.reason)
	}
	req, err := c.buildRequest(ep, keys, m, now)
	if err != nil {
		c.states.abandon(ep.ID, now, adm.probe)
		return c.cancelDelivery(ctx, d, err.Error(), manual, orderedIDOf(ep))
	}
	res := c.http.Post(ctx, req)
	if ctx.Err() != nil && res.Err != nil {
		// Stopped mid-attempt: make it again later rather than count it.
		c.states.abandon(ep.ID, now, adm.probe)
		return ctx.Err()
	}
	return c.recordAttempt(ctx, madeAttempt{job: job, d: d, m: m, ep: ep, adm: adm, at: now, res: res})
}

// loadWork reads a delivery with its message, through the coalescing loader when the store has one.
func (c *Client) loadWork(ctx context.Context, deliveryID string) (*Delivery, *Message, error) {
	if c.loader != nil {
		return c.loader.load(ctx, deliveryID)
	}
	return c.store.LoadWork(ctx, deliveryID)
}

// endpoint returns the endpoint and its keys, from the cache when fresh; workers that miss it
// at once share one read (endpoint_load.go).
func (c *Client) endpoint(ctx context.Context, id string, now time.Time) (*Endpoint, []SigningKey, error) {
	if ep, keys, ok := c.states.cached(id, now); ok {
		return ep, keys, nil
	}
	return c.states.loads.do(ctx, id, func() (*Endpoint, []SigningKey, error) {
		return c.readEndpoint(ctx, id, now)
	})
}

// readEndpoint reads the endpoint, its keys and the policy it inherits, and caches them.
func (c *Client) readEndpoint(ctx context.Context, id string, now time.Time) (*Endpoint, []SigningKey, error) {
	ep, err := c.store.GetEndpointByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	keys, err := c.store.SigningKeys(ctx, id)
	if err == nil {
		err = c.box.openKeys(id, keys)
	}
	if err == nil {
		err = c.box.openHeaders(ep)
	}
	if err != nil {
		return nil, nil, err
	}
	if ep.RateLimit == 0 || ep.RetrySchedule == nil || ep.AttemptTimeout == 0 {
		if app, err := c.store.GetApplication(ctx, ep.AppID); err == nil {
			if ep.RateLimit == 0 {
				ep.RateLimit = app.ThrottleRate
			}
			inheritPolicy(ep, app)
		}
	}
	c.states.store(ep, keys, now)
	return ep, keys, nil
}

// cancelDelivery ends a delivery that can't be attempted and, when ordered names its endpoint
// (an ordered one), queues the endpoint's next delivery in the same transaction. A manual attempt
// leaves the delivery as it is.
func (c *Client) cancelDelivery(ctx context.Context, d *Delivery, reason string, manual bool, ordered string) error {
	if manual {
		return nil
	}
	now := c.now()
	return c.rec.do(ctx, func(ctx context.Context, tx Tx) error {
		if err := tx.SetDeliveryStatus(ctx, d.ID, DeliveryCancelled, nil, reason, now); err != nil {
			return err
		}
		if ordered == "" {
			return nil
		}
		next, err := c.advance(ctx, tx, ordered, 0)
		if err != nil || next == nil {
			return err
		}
		return c.queue.EnqueueTx(ctx, tx, []Job{*next})
	})
}

// madeAttempt is an attempt a worker made, or recorded without sending, and what came of it.
type madeAttempt struct {
	job Job
	d   *Delivery
	m   *Message
	ep  *Endpoint
	// adm is the admission the attempt had; one that was not sent (adm.notSent) is recorded as a
	// failed attempt but leaves the endpoint's state alone, since nothing was in flight.
	adm admission
	at  time.Time // when the attempt was admitted
	res *delivery.Result
}

// recordAttempt records the attempt and decides what follows, in one transaction: the attempt
// row, the delivery's state, the endpoint's health, the next job, and any operational event.
func (c *Client) recordAttempt(ctx context.Context, t madeAttempt) error {
	job, d, m, ep, adm, at, res := t.job, t.d, t.m, t.ep, t.adm, t.at, t.res
	now := c.now()
	a := Attempt{
		ID: c.newID(prefixAttempt), DeliveryID: d.ID, MessageID: m.ID, EndpointID: ep.ID, AppID: d.AppID,
		Number: job.Attempt, Trigger: job.Trigger, URL: ep.URL, At: at, Duration: res.Duration,
		StatusCode: res.StatusCode, Success: res.Outcome == delivery.Success,
		Error: res.Message(), Response: res.Response(),
		RequestHeaders: requestHeaders(res.RequestHeader, ep), ResponseHeaders: responseHeaders(res),
	}
	if job.Trigger == TriggerManual {
		a.Number = d.Attempts // manual attempts don't move the schedule
	}
	rec := AttemptRecord{Attempt: a, Status: d.Status}
	var next *Job
	var ops []OperationalEvent
	disable := ""
	exhausted, recovered := false, false
	throttle := time.Duration(0)

	switch {
	case a.Success:
		rec.Status = DeliveryDelivered
		if job.Trigger == TriggerScheduled && job.Attempt > failingAfter {
			ops = append(ops, c.opEvent(OpMessageAttemptRecovered, d, "delivered on attempt "+strconv.Itoa(job.Attempt)))
			recovered = true
		}
	case res.Outcome == delivery.Gone:
		disable = "gone (HTTP 410)"
		if d.Status == DeliveryPending {
			rec.Status = DeliveryCancelled
		}
	case job.Trigger == TriggerManual:
		// A failed manual attempt changes nothing else: a pending delivery keeps its next retry.
		rec.NextAttemptAt = d.NextAttemptAt
	default:
		wait, ok := c.retryDelay(ep, job.Attempt)
		if res.Outcome == delivery.Throttled || res.RetryAfter > 0 {
			throttle = c.throttleDelay(0, res.RetryAfter)
			wait = c.throttleDelay(wait, res.RetryAfter)
		}
		if ok {
			t := now.Add(wait)
			rec.NextAttemptAt = &t
			// The queue runs on real time; Config.Now only stamps records and measures windows.
			next = &Job{DeliveryID: d.ID, Attempt: job.Attempt + 1, Trigger: TriggerScheduled, NotBefore: time.Now().Add(wait)}
			if job.Attempt == failingAfter {
				ops = append(ops, c.opEvent(OpMessageAttemptFailing, d, a.Error))
			}
		} else {
			rec.Status, exhausted = DeliveryFailed, true
			ops = append(ops, c.opEvent(OpMessageAttemptExhausted, d, a.Error))
			if c.cfg.DisableAfter > 0 && ep.FailingSince != nil && now.Sub(*ep.FailingSince) >= c.cfg.DisableAfter &&
				(ep.LastSuccessAt == nil || ep.LastSuccessAt.Before(*ep.FailingSince)) {
				disable = "no successful delivery for " + c.cfg.DisableAfter.String()
			}
		}
	}
	if disable != "" {
		ops = append(ops, c.opEvent(OpEndpointDisabled, d, disable))
	}

	w := &attemptWrite{rec: rec, next: next, ops: ops}
	if ep.Ordered && d.Status == DeliveryPending && rec.Status != DeliveryPending {
		w.advance = ep.ID // the next delivery in order goes once this one ends
	}
	if disable != "" {
		w.disable = &endpointDisable{id: ep.ID, reason: disable, at: now}
	}
	// The request has ended: its slot of the endpoint's cap goes to the next attempt now, while
	// the record is written, except on an ordered endpoint, whose next delivery goes only once
	// this one's end is written (w.advance).
	change, cooldown := circuitKept, time.Duration(0)
	release := func() {
		if adm.notSent == "" {
			change, cooldown = c.states.release(ep.ID, attemptEnd{
				started: at, success: a.Success, dur: res.Duration, throttle: throttle, probe: adm.probe,
			}, now)
		}
	}
	if !ep.Ordered {
		release()
	}
	err := c.rec.write(ctx, w)
	if ep.Ordered {
		release()
	}
	if disable != "" {
		c.states.invalidate(ep.ID)
	}
	if err != nil {
		disable, exhausted, recovered = "", false, false // none happened: the attempt is made again
	}
	c.logAttempt(ctx, d, a.Number, res, attemptChanges{disable, exhausted, recovered, change, cooldown})
	if err != nil {
		// The attempt was made but not recorded: the job runs again and makes it again.
		return fmt.Errorf("record attempt %d of delivery %s: %w", job.Attempt, d.ID, err)
	}
	if c.cfg.OnAttempt != nil {
		c.cfg.OnAttempt(&a, rec.Status)
	}
	return nil
}

// failingAfter is the attempt after whose failure message.attempt.failing is sent (as Svix).
const failingAfter = 4

func (c *Client) opEvent(typ string, d *Delivery, reason string) OperationalEvent {
	return OperationalEvent{ID: c.newID(prefixEvent), Type: typ, AppID: d.AppID, EndpointID: d.EndpointID, MessageID: d.MessageID, Reason: reason, At: c.now()}
}
