package hookd

import (
	"errors"
	"sync"
	"time"
)

// endpointStates holds what the workers of this process know of each endpoint: its cached
// configuration and keys, attempts in flight, the circuit breaker, throttling and the rate limit.
// It is the one place isolation is decided.
type endpointStates struct {
	mu sync.Mutex
	m  map[string]*endpointState
}

// endpointTTL is how long a cached endpoint is trusted before it is read again; changes made
// through this client invalidate it at once.
const endpointTTL = time.Second

type endpointState struct {
	ep       *Endpoint
	keys     []SigningKey
	loadedAt time.Time

	inFlight []time.Time   // start times of the attempts in flight
	avgDur   time.Duration // moving average of attempt durations; 0 until one ends
	waiters  []*slotWaiter // jobs waiting in their workers for a slot, first come first served
	woken    int           // waiters woken for a freed slot that have not asked for it yet
	capacity int           // the cap the last admission applied (negative: none)

	failures  int       // consecutive failures
	openUntil time.Time // circuit open until (zero: closed)
	cooldown  time.Duration
	probing   bool // a half-open probe is in flight

	throttledUntil time.Time

	tokens   float64 // rate limit bucket
	tokensAt time.Time
}

func newEndpointStates() *endpointStates {
	return &endpointStates{m: map[string]*endpointState{}}
}

// cached returns the endpoint and its keys when they were loaded within the TTL.
func (s *endpointStates) cached(id string, now time.Time) (*Endpoint, []SigningKey, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[id]
	if st == nil || st.ep == nil || now.Sub(st.loadedAt) > endpointTTL {
		return nil, nil, false
	}
	return st.ep, st.keys, true
}

// store caches a freshly read endpoint; a new state starts from the stored failure count.
func (s *endpointStates) store(ep *Endpoint, keys []SigningKey, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(ep.ID)
	if st.ep == nil {
		st.failures = ep.ConsecutiveFailures
	}
	st.ep, st.keys, st.loadedAt = ep, keys, now
}

// invalidate drops the cached configuration of an endpoint (after a change through this client).
func (s *endpointStates) invalidate(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.m[id]; st != nil {
		st.ep, st.keys = nil, nil
	}
}

func (s *endpointStates) state(id string) *endpointState {
	st := s.m[id]
	if st == nil {
		st = &endpointState{}
		s.m[id] = st
	}
	return st
}

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
}

// slotWaiter is a job waiting for a slot of a capped endpoint: ch is closed when a slot frees
// and it is first in line.
type slotWaiter struct {
	ch chan struct{}
}

// capWait is how long a job refused by the cap of a fast endpoint waits in its worker for a slot
// before it is snoozed. A snooze costs the queue a write, a fetch and the delivery's load; with
// more workers than the endpoints' caps add up to (100 against 10 endpoints of 8 in B1), 40% of
// the jobs on PostgreSQL were snoozes. An endpoint whose attempts take longer (a slow or hanging
// one) never holds a worker this way.
const capWait = minSlotWait

// isolation are the limits admit applies.
type isolation struct {
	maxInFlight      int // < 0: no cap
	circuitThreshold int // < 0: no circuit breaker
	rate             int // messages per second; 0: none
	timeout          time.Duration
	manual           bool // a manual attempt: an operator's explicit act goes through an open circuit
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
	if woken != nil {
		st.woken--
	}
	adm := st.admit(lim, now, jitter, woken != nil)
	if adm.wait > 0 || adm.notSent != "" {
		st.wakeFree() // a slot this attempt leaves goes to the next in line
	}
	return adm
}

func (st *endpointState) admit(lim isolation, now time.Time, jitter float64, woken bool) admission {
	spread := func(d time.Duration) time.Duration { return d + time.Duration(float64(d)*0.25*jitter) }
	if now.Before(st.throttledUntil) {
		return admission{wait: spread(st.throttledUntil.Sub(now)), reason: "endpoint throttled"}
	}
	probe := false
	if lim.circuitThreshold >= 0 && !st.openUntil.IsZero() && !lim.manual {
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
		adm := admission{wait: spread(st.slotWait(now, lim.timeout)), reason: "endpoint at its cap of attempts in flight"}
		if st.avgDur > 0 && st.avgDur < capWait {
			adm.waiter = &slotWaiter{ch: make(chan struct{})}
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

// minSlotWait is the shortest snooze of a job refused by an endpoint's cap.
const minSlotWait = 50 * time.Millisecond

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

// outcome is what an attempt tells the endpoint's state.
type outcome struct {
	success   bool
	started   time.Time // when the attempt was admitted
	dur       time.Duration
	throttle  time.Duration // > 0: no attempt to the endpoint for this long
	probe     bool
	threshold int // circuit threshold (< 0: off)
	cooldown  time.Duration
	maxCool   time.Duration
}

// circuitChange is what an attempt's end did to the endpoint's circuit.
type circuitChange int

const (
	circuitKept   circuitChange = iota // open or closed as before
	circuitOpened                      // closed, and opened by this failure
	circuitClosed                      // open, and closed by this success
)

// release ends an admitted attempt and updates the circuit breaker and throttling. It reports
// whether the circuit opened or closed, and the cooldown of an opened one.
func (s *endpointStates) release(id string, o outcome, now time.Time) (circuitChange, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.end(o.started)
	if st.avgDur == 0 {
		st.avgDur = o.dur
	} else {
		st.avgDur = (st.avgDur*7 + o.dur) / 8
	}
	if o.probe {
		st.probing = false
	}
	if o.throttle > 0 {
		st.throttledUntil = now.Add(o.throttle)
	}
	if o.success {
		change := circuitKept
		if !st.openUntil.IsZero() {
			change = circuitClosed
		}
		st.failures, st.openUntil, st.cooldown = 0, time.Time{}, 0
		return change, 0
	}
	st.failures++
	if o.threshold < 0 {
		return circuitKept, 0
	}
	switch {
	case o.probe:
		st.cooldown = min(st.cooldown*2, o.maxCool)
		st.openUntil = now.Add(st.cooldown)
	case st.openUntil.IsZero() && st.failures >= o.threshold:
		st.cooldown = o.cooldown
		st.openUntil = now.Add(st.cooldown)
		return circuitOpened, st.cooldown
	}
	return circuitKept, 0
}

// end removes an attempt admitted at started from those in flight, and wakes the jobs waiting
// for a slot.
func (st *endpointState) end(started time.Time) {
	for i, t := range st.inFlight {
		if t.Equal(started) {
			st.inFlight = append(st.inFlight[:i], st.inFlight[i+1:]...)
			break
		}
	}
	st.wakeFree()
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

// abandon ends an admitted attempt that was never made (the job was cancelled).
func (s *endpointStates) abandon(id string, started time.Time, probe bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.end(started)
	if probe {
		st.probing = false
	}
}

// circuitOpen reports whether the endpoint's circuit is open (for tests and the dashboard).
func (s *endpointStates) circuitOpen(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[id]
	return st != nil && !st.openUntil.IsZero() && (now.Before(st.openUntil) || st.probing)
}
