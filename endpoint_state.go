package hookd

import (
	"sync"
	"time"
)

// endpointStates holds what the workers of this process know of each endpoint: its cached
// configuration and keys, attempts in flight, the circuit breaker, throttling and the rate limit.
// It is the one place isolation is decided: admit (admission.go) says whether an attempt may
// start, release what its end changes.
type endpointStates struct {
	circuit circuitConfig // set once, at NewClient

	// surplus tells the slots' heartbeat that an attempt's end left slots above the share
	// unused (fleet_slots.go); it holds one signal.
	surplus chan struct{}

	mu sync.Mutex
	m  map[string]*endpointState

	loads endpointLoads // the reads of endpoints in flight, shared by the workers that miss
}

// circuitConfig is how the circuit breaker opens and pauses (Config.CircuitThreshold,
// CircuitCooldown, CircuitMaxCooldown).
type circuitConfig struct {
	threshold   int           // consecutive failures that open the circuit; < 0: no circuit breaker
	cooldown    time.Duration // the first pause of an open circuit
	maxCooldown time.Duration // the longest pause, which failed probes double towards
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

	// The slots leased from the other processes' share of the cap (fleet_slots.go).
	fleetCap     int       // the endpoint's cap across processes, as the last admission saw it
	held         int       // slots this process holds
	heldUntil    time.Time // when their lease ends here
	peak         int       // most attempts in flight since settleSlots last looked idle
	acquiredAt   time.Time // when an acquisition last set held
	refusedUntil time.Time // the leaser refused more slots: ask again after this
	leasing      bool      // a call of the leaser for the endpoint is in flight
	dirty        bool      // the leaser's count may differ from held: set it at the next look
	contenders   int       // the processes holding or wanting slots, as the leaser last counted
	expectUntil  time.Time // refused slots others hold above their share: expected back until then
	wants        bool      // refused every slot, the leaser keeps this process's want

	failures  int       // consecutive failures
	openUntil time.Time // circuit open until (zero: closed)
	cooldown  time.Duration
	probing   bool // a half-open probe is in flight

	throttledUntil time.Time

	tokens   float64 // rate limit bucket
	tokensAt time.Time
}

func newEndpointStates(circuit circuitConfig) *endpointStates {
	return &endpointStates{circuit: circuit, m: map[string]*endpointState{}, surplus: make(chan struct{}, 1)}
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
	s.loads.forget(id)
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

// attemptEnd is what an attempt tells the endpoint's state.
type attemptEnd struct {
	success  bool
	started  time.Time // when the attempt was admitted
	dur      time.Duration
	throttle time.Duration // > 0: no attempt to the endpoint for this long
	probe    bool
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
func (s *endpointStates) release(id string, o attemptEnd, now time.Time) (circuitChange, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.end(o.started)
	s.noteSurplus(st)
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
	if s.circuit.threshold < 0 {
		return circuitKept, 0
	}
	switch {
	case o.probe:
		st.cooldown = min(st.cooldown*2, s.circuit.maxCooldown)
		st.openUntil = now.Add(st.cooldown)
	case st.openUntil.IsZero() && st.failures >= s.circuit.threshold:
		st.cooldown = s.circuit.cooldown
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

// noteSurplus tells the slots' heartbeat when the endpoint's slots here exceed its share with
// some unused, without waiting for it.
func (s *endpointStates) noteSurplus(st *endpointState) {
	if !st.overShare() {
		return
	}
	select {
	case s.surplus <- struct{}{}:
	default:
	}
}

// abandon ends an admitted attempt that was never made (the job was cancelled).
func (s *endpointStates) abandon(id string, started time.Time, probe bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.end(started)
	s.noteSurplus(st)
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
