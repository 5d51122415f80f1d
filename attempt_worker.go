package hookd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
		return c.cancelDelivery(ctx, d, "payload expired", manual)
	}
	now := c.now()
	ep, keys, err := c.endpoint(ctx, d.EndpointID, now)
	if errors.Is(err, ErrNotFound) {
		return c.cancelDelivery(ctx, d, "endpoint deleted", manual)
	}
	if err != nil {
		return err
	}
	if ep.Disabled {
		return c.cancelDelivery(ctx, d, "endpoint disabled", manual)
	}

	adm, now := c.admit(ctx, ep, now, manual)
	if adm.notSent != "" {
		return c.finish(ctx, job, d, m, ep, adm, now, &delivery.Result{Outcome: delivery.Failure, Err: errCircuitOpen})
	}
	if adm.wait > 0 {
		return Snooze(adm.wait, adm.reason)
	}
	req, err := c.buildRequest(ep, keys, m, now)
	if err != nil {
		c.states.abandon(ep.ID, now, adm.probe)
		return c.cancelDelivery(ctx, d, err.Error(), manual)
	}
	res := c.http.Post(ctx, req)
	if ctx.Err() != nil && res.Err != nil {
		// Stopped mid-attempt: make it again later rather than count it.
		c.states.abandon(ep.ID, now, adm.probe)
		return ctx.Err()
	}
	return c.finish(ctx, job, d, m, ep, adm, now, res)
}

// loadWork reads a delivery with its message, through the coalescing loader when the store has one.
func (c *Client) loadWork(ctx context.Context, deliveryID string) (*Delivery, *Message, error) {
	if c.loader != nil {
		return c.loader.load(ctx, deliveryID)
	}
	return c.store.LoadWork(ctx, deliveryID)
}

// admit asks the endpoint's state whether the attempt may start. Refused by the cap of a fast
// endpoint, it waits up to capWait for a slot to free (see capWait). It returns the verdict and
// the time it was given.
func (c *Client) admit(ctx context.Context, ep *Endpoint, now time.Time, manual bool) (admission, time.Time) {
	lim := c.limits(ep)
	lim.manual = manual
	adm := c.states.admit(ep.ID, lim, now, c.cfg.Rand(), nil)
	if adm.waiter == nil {
		return adm, now
	}
	deadline := time.NewTimer(capWait)
	defer deadline.Stop()
	for adm.waiter != nil {
		select {
		case <-adm.waiter.ch:
		case <-deadline.C:
			c.states.leaveLine(ep.ID, adm.waiter)
			adm.waiter = nil
			return adm, now
		case <-ctx.Done():
			c.states.leaveLine(ep.ID, adm.waiter)
			adm.waiter = nil
			return adm, now
		}
		now = c.now()
		adm = c.states.admit(ep.ID, lim, now, c.cfg.Rand(), adm.waiter)
	}
	return adm, now
}

// limits returns the isolation limits of an endpoint.
func (c *Client) limits(ep *Endpoint) isolation {
	lim := isolation{maxInFlight: c.cfg.MaxInFlightPerEndpoint, circuitThreshold: c.cfg.CircuitThreshold, rate: ep.RateLimit, timeout: c.cfg.Delivery.Timeout}
	if ep.MaxInFlight > 0 {
		lim.maxInFlight = ep.MaxInFlight
	}
	return lim
}

// endpoint returns the endpoint and its keys, from the cache when fresh.
func (c *Client) endpoint(ctx context.Context, id string, now time.Time) (*Endpoint, []SigningKey, error) {
	if ep, keys, ok := c.states.cached(id, now); ok {
		return ep, keys, nil
	}
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
	if ep.RateLimit == 0 {
		if app, err := c.store.GetApplication(ctx, ep.AppID); err == nil {
			ep.RateLimit = app.ThrottleRate
		}
	}
	c.states.store(ep, keys, now)
	return ep, keys, nil
}

// cancelDelivery ends a delivery that can't be attempted. A manual attempt leaves the delivery
// as it is.
func (c *Client) cancelDelivery(ctx context.Context, d *Delivery, reason string, manual bool) error {
	if manual {
		return nil
	}
	now := c.now()
	return c.rec.do(ctx, func(ctx context.Context, tx Tx) error {
		return tx.SetDeliveryStatus(ctx, d.ID, DeliveryCancelled, nil, reason, now)
	})
}

// buildRequest signs the message for the endpoint with every active key of its scheme.
func (c *Client) buildRequest(ep *Endpoint, keys []SigningKey, m *Message, now time.Time) (*delivery.Request, error) {
	var secrets []string
	for _, k := range keys {
		if k.ExpiresAt == nil || k.ExpiresAt.After(now) {
			secrets = append(secrets, k.Secret)
		}
	}
	if len(secrets) == 0 {
		return nil, errors.New("endpoint has no active signing key")
	}
	h := make(http.Header, len(ep.Headers)+7)
	for k, v := range ep.Headers {
		h.Set(k, v)
	}
	body := []byte(m.Payload)
	switch ep.Scheme {
	case SchemeStripe, SchemeEnvelope:
		if ep.Scheme == SchemeEnvelope {
			var err error
			if body, err = envelope(m); err != nil {
				return nil, err
			}
		}
		s, err := c.sign.stripeSigner(secrets)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		for k, v := range s.Headers(m.EventType, now, body) {
			h[k] = v
		}
	default:
		s, err := c.sign.webhook(secrets)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		if err := setStandardHeaders(h, s, c.cfg.SignatureHeaders.flavors(ep.Scheme), m.ID, now, body); err != nil {
			return nil, err
		}
	}
	h.Set("Content-Type", "application/json")
	return &delivery.Request{URL: ep.URL, Header: h, Body: body}, nil
}

// envelope is the body of SchemeEnvelope for m: {"id", "type", "occurredAt", "data"}.
func envelope(m *Message) ([]byte, error) {
	id := m.EventID
	if id == "" {
		id = m.ID
	}
	return json.Marshal(struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		OccurredAt string          `json:"occurredAt"`
		Data       json.RawMessage `json:"data"`
	}{id, m.EventType, m.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), json.RawMessage(m.Payload)})
}

// finish records the attempt and decides what follows, in one transaction: the attempt row, the
// delivery's state, the endpoint's health, the next job, and any operational event.
//
// adm is the admission the attempt had; one that was not sent (adm.notSent) is recorded as a failed
// attempt but leaves the endpoint's state alone, since nothing was in flight.
func (c *Client) finish(ctx context.Context, job Job, d *Delivery, m *Message, ep *Endpoint, adm admission, at time.Time, res *delivery.Result) error {
	now := c.now()
	a := Attempt{
		ID: newID(prefixAttempt), DeliveryID: d.ID, MessageID: m.ID, EndpointID: ep.ID, AppID: d.AppID,
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
		wait, ok := c.retryDelay(job.Attempt)
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
	if disable != "" {
		w.disable = &endpointDisable{id: ep.ID, reason: disable, at: now}
	}
	err := c.rec.write(ctx, w)
	change, cooldown := circuitKept, time.Duration(0)
	if adm.notSent == "" {
		change, cooldown = c.states.release(ep.ID, outcome{
			started: at, success: a.Success, dur: res.Duration, throttle: throttle, probe: adm.probe,
			threshold: c.cfg.CircuitThreshold, cooldown: c.cfg.CircuitCooldown, maxCool: c.cfg.CircuitMaxCooldown,
		}, now)
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
	return OperationalEvent{ID: newID(prefixEvent), Type: typ, AppID: d.AppID, EndpointID: d.EndpointID, MessageID: d.MessageID, Reason: reason, At: c.now()}
}

// now is the time a row is stamped with, in UTC and to the microsecond, the precision every store
// keeps: a value returned by a create or an update is the one a later read returns.
func (c *Client) now() time.Time { return c.cfg.Now().UTC().Truncate(time.Microsecond) }

// writeAttempts writes a batch's attempts in tx: every record in one RecordAttempts, then the
// endpoints to disable, the operational events, and the next jobs in one insert.
func (c *Client) writeAttempts(ctx context.Context, tx Tx, ws []*attemptWrite) error {
	recs := make([]AttemptRecord, len(ws))
	var ops []OperationalEvent
	var jobs []Job
	for i, w := range ws {
		recs[i] = w.rec
		ops = append(ops, w.ops...)
		if w.next != nil {
			jobs = append(jobs, *w.next)
		}
	}
	if err := tx.RecordAttempts(ctx, recs); err != nil {
		return err
	}
	for _, w := range ws {
		if d := w.disable; d != nil {
			if err := tx.SetEndpointDisabled(ctx, d.id, true, d.reason, d.at); err != nil {
				return err
			}
		}
	}
	if err := c.emitOps(ctx, tx, ops); err != nil {
		return err
	}
	if len(jobs) > 0 {
		return c.queue.EnqueueTx(ctx, tx, jobs)
	}
	return nil
}
