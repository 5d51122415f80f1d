package hookd

import (
	"context"
	"errors"
	"time"
)

// admission is the isolation verdict for one attempt.
type admission struct {
	wait   time.Duration // > 0: snooze this long
	reason string
	probe  bool // this attempt is the circuit's half-open probe
	// notSent, when set, says the try is not made and is recorded as a failed attempt with this
	// text: it fell due while the endpoint's circuit was open. The schedule moves on as after any
	// failure, so a dead endpoint's backlog ends within its schedule rather than waiting behind
	// probes, and each pending delivery's next attempt is the time its schedule says.
	notSent string
	// waiter, when the attempt was refused only by the cap of an endpoint whose attempts take
	// less than capWait on average, is the attempt's place in the endpoint's line for a slot.
	waiter *slotWaiter
	// ask, when the attempt was refused only because every slot this process leases of the
	// endpoint is busy and it leases fewer than the cap, is the acquisition to make before
	// admitting it again (fleet_slots.go).
	ask *slotAsk
}

// slotAsk is an acquisition of slots: want more beyond the held this process counts.
type slotAsk struct {
	held, want int
}

// isolation are the limits admit applies.
type isolation struct {
	maxInFlight int // < 0: no cap
	rate        int // messages per second; 0: none
	timeout     time.Duration
	manual      bool // a manual attempt: an operator's explicit act goes through an open circuit
	// fleet says the cap is shared with other processes through leased slots (fleetSlots); asked
	// says this admission has asked the leaser already.
	fleet, asked bool
}

// admit asks the endpoint's state whether the attempt may start. Refused by the cap of a fast
// endpoint, it waits up to capWait for a slot to free (see capWait), or while slots are expected
// back from other processes (fleet_slots.go). It returns the verdict and
// the time it was given.
func (c *Client) admit(ctx context.Context, ep *Endpoint, now time.Time, manual bool) (admission, time.Time) {
	lim := c.limits(ep)
	lim.manual = manual
	adm := c.states.admit(ep.ID, lim, now, c.cfg.Rand(), nil)
	if adm.ask != nil {
		// Outside the states' mutex: the other workers go on meanwhile.
		c.slots.acquire(ctx, ep.ID, adm.ask.held, adm.ask.want, lim.maxInFlight)
		lim.asked = true
		now = c.now()
		adm = c.states.admit(ep.ID, lim, now, c.cfg.Rand(), nil)
	}
	if adm.waiter == nil {
		return adm, now
	}
	deadline := time.NewTimer(adm.waiter.patience)
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
	lim := isolation{maxInFlight: c.cfg.MaxInFlightPerEndpoint, rate: ep.RateLimit, timeout: c.attemptTimeout(ep)}
	if ep.MaxInFlight > 0 {
		lim.maxInFlight = ep.MaxInFlight
	}
	if ep.Ordered {
		lim.maxInFlight = 1 // one at a time, in order (ordered.go)
	}
	lim.fleet = c.slots != nil && lim.maxInFlight >= 0
	return lim
}

// admit decides whether an attempt to the endpoint may start now. When it may, the attempt counts
// as in flight until release. woken is the waiter of an attempt that waited in line for a slot and
// was woken (nil for a first try).
//
// The line is first come, first served: a slot that frees wakes the first in line and is kept for
// it, a first try does not overtake those in line, and a woken waiter refused again (another took
// the slot meanwhile) goes back to the front.
func (s *endpointStates) admit(id string, lim isolation, now time.Time, jitter float64, woken *slotWaiter) admission {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.capacity = lim.maxInFlight
	var leaseNow time.Time // the lease's clock, which a Config.Now of tests does not move
	if lim.fleet {
		leaseNow = time.Now()
		st.fleetCap = lim.maxInFlight
		st.capacity = st.fleetCapacity(leaseNow)
	}
	if woken != nil {
		st.woken--
	}
	adm := st.admit(lim, s.circuit.threshold >= 0, now, leaseNow, jitter, woken != nil)
	if adm.wait > 0 || adm.notSent != "" {
		st.wakeFree() // a slot this attempt leaves goes to the next in line
	}
	return adm
}

// admit is endpointStates.admit for one endpoint's state; breaker says the circuit breaker is on,
// leaseNow is the time of the slots' leases (with lim.fleet).
func (st *endpointState) admit(lim isolation, breaker bool, now, leaseNow time.Time, jitter float64, woken bool) admission {
	spread := func(d time.Duration) time.Duration { return d + time.Duration(float64(d)*0.25*jitter) }
	if now.Before(st.throttledUntil) {
		return admission{wait: spread(st.throttledUntil.Sub(now)), reason: "endpoint throttled"}
	}
	probe := false
	if breaker && !st.openUntil.IsZero() && !lim.manual {
		switch {
		case now.Before(st.openUntil):
			return admission{notSent: errCircuitOpen.Error()}
		case st.probing:
			// The probe ends within the attempt timeout: wait for its verdict, no longer.
			return admission{wait: spread(probeWait(lim.timeout)), reason: "circuit half-open, waiting for its probe"}
		}
		probe = true
	}
	if lim.maxInFlight >= 0 && (st.free() <= 0 || (!woken && len(st.waiters) > 0)) {
		if lim.fleet && st.free() <= 0 && st.capacity < lim.maxInFlight {
			if !lim.asked && !woken {
				if held, want, ok := st.wantSlots(leaseNow); ok {
					return admission{ask: &slotAsk{held: held, want: want}}
				}
			}
			// Refused, with no attempt here to free a slot and none expected back from the
			// others, the job snoozes; else it waits in the line like one refused by a local cap.
			if leaseNow.Before(st.refusedUntil) && len(st.inFlight) == 0 && !st.expecting(leaseNow) {
				return admission{wait: spread(st.fleetWait(now, lim.timeout)), reason: "endpoint at its cap of attempts in flight across processes"}
			}
		}
		adm := admission{wait: spread(st.slotWait(now, lim.timeout)), reason: "endpoint at its cap of attempts in flight"}
		// A process with a share of the cap serves its line at that share's pace: its jobs wait
		// as long as the whole cap's would take to reach the same place, or while slots held
		// above the others' shares are expected back.
		patience := capWait
		if lim.fleet && st.contenders > 1 {
			patience = capWait * time.Duration(st.fleetCap) / time.Duration(max(st.share(), 1))
		}
		expected := lim.fleet && st.expecting(leaseNow)
		if expected {
			patience = max(st.expectUntil.Sub(leaseNow), patience)
		}
		if (st.avgDur > 0 && st.avgDur < capWait) || (expected && st.avgDur == 0) {
			adm.waiter = &slotWaiter{ch: make(chan struct{}), patience: patience}
			if woken {
				st.waiters = append([]*slotWaiter{adm.waiter}, st.waiters...)
			} else {
				st.waiters = append(st.waiters, adm.waiter)
			}
		}
		return adm
	}
	if lim.rate > 0 {
		rate := float64(lim.rate)
		if st.tokensAt.IsZero() {
			st.tokens, st.tokensAt = rate, now
		}
		st.tokens = min(rate, st.tokens+now.Sub(st.tokensAt).Seconds()*rate)
		st.tokensAt = now
		if st.tokens < 1 {
			wait := time.Duration((1 - st.tokens) / rate * float64(time.Second))
			return admission{wait: spread(max(wait, time.Millisecond)), reason: "endpoint rate limit"}
		}
		st.tokens--
	}
	st.inFlight = append(st.inFlight, now)
	st.peak = max(st.peak, len(st.inFlight))
	if probe {
		st.probing = true
	}
	return admission{probe: probe}
}

// errCircuitOpen is the error of a try recorded without being sent, its endpoint's circuit open.
var errCircuitOpen = errors.New("circuit open: not sent")

// probeWait is how long a try waits while the circuit's probe is in flight: the attempt timeout,
// which the probe cannot outlast (a second when there is none).
func probeWait(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return time.Second
	}
	return timeout
}

// slotWaiter is a job waiting for a slot of a capped endpoint: ch is closed when a slot frees
// and it is first in line.
type slotWaiter struct {
	ch       chan struct{}
	patience time.Duration // how long it waits: capWait, or while slots are expected back from other processes
}

// capWait is how long a job refused by the cap of a fast endpoint waits in its worker for a slot
// before it is snoozed. A snooze costs the queue a write, a fetch and the delivery's load: when
// the workers outnumber the slots the endpoints' caps add up to, snoozing every refused job
// would make snoozes a large share of the queue's work. An endpoint whose attempts take longer
// (a slow or hanging one) never holds a worker this way.
const capWait = minSlotWait

// minSlotWait is the shortest snooze of a job refused by an endpoint's cap.
const minSlotWait = 50 * time.Millisecond

// free is the number of slots neither in flight nor kept for a woken waiter; negative capacity:
// no cap.
func (st *endpointState) free() int {
	if st.capacity < 0 {
		return 1 << 30
	}
	return st.capacity - len(st.inFlight) - st.woken
}

// wakeFree wakes as many in line as there are free slots.
func (st *endpointState) wakeFree() {
	for len(st.waiters) > 0 && st.free() > 0 {
		close(st.waiters[0].ch)
		st.waiters = st.waiters[1:]
		st.woken++
	}
}

// slotWait estimates when the oldest attempt in flight ends, so that a job snoozed at the cap
// comes back about when a slot frees: each snooze costs the queue a write and a fetch, and a
// hanging endpoint's backlog must not spin. Before any attempt has ended, the estimate doubles
// the oldest attempt's age, so waiters back off towards the timeout in a few steps.
func (st *endpointState) slotWait(now time.Time, timeout time.Duration) time.Duration {
	if len(st.inFlight) == 0 { // refused behind others in line, a slot about to be taken
		return minSlotWait
	}
	oldest := st.inFlight[0]
	for _, t := range st.inFlight[1:] {
		if t.Before(oldest) {
			oldest = t
		}
	}
	age := now.Sub(oldest)
	expect := st.avgDur
	if expect == 0 {
		expect = 2 * age
	}
	if timeout > 0 {
		expect = min(expect, timeout)
	}
	return min(max(expect-age, minSlotWait), max(timeout, minSlotWait))
}

// leaveLine takes w out of the endpoint's line: it waited too long. When a freed slot had woken it
// already, the slot goes to the next in line.
func (s *endpointStates) leaveLine(id string, w *slotWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	for i, x := range st.waiters {
		if x == w {
			st.waiters = append(st.waiters[:i], st.waiters[i+1:]...)
			return
		}
	}
	st.woken--
	st.wakeFree()
}
