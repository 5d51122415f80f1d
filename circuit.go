package hookd

import (
	"slices"
	"time"
)

// CircuitState is what this process's workers know of an endpoint's circuit breaker, in the terms
// a dashboard shows it: paused after Failures consecutive failures, tried again at Until.
type CircuitState struct {
	// Open is true while tries wait for the cool-down to end (or for the probe that follows it).
	Open bool
	// Failures is the count of consecutive failures that paused the endpoint.
	Failures int
	// Until is when the cool-down ends and a probe is let through; in the past while that probe
	// is in flight.
	Until time.Time
}

// Circuit returns the state of the endpoint's circuit in this process; a closed one is the zero
// CircuitState. It reads and changes nothing else.
func (c *Client) Circuit(endpointID string) CircuitState {
	now := c.now()
	s := c.states
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[endpointID]
	if st == nil || st.openUntil.IsZero() || (!now.Before(st.openUntil) && !st.probing) {
		return CircuitState{}
	}
	return CircuitState{Open: true, Failures: st.failures, Until: st.openUntil}
}

// CircuitOpen reports whether this process's circuit breaker holds back the attempts to the
// endpoint with id endpointID (each process keeps its own).
func (c *Client) CircuitOpen(endpointID string) bool {
	return c.states.circuitOpen(endpointID, c.now())
}

// OpenCircuits returns the ids of the endpoints whose circuit breaker in this process holds back
// their attempts now, sorted; each process keeps its own circuits. An endpoint whose cool-down
// has passed counts as open while its half-open probe is in flight, and as closed before the
// probe is made, as CircuitOpen does.
func (c *Client) OpenCircuits() []string {
	now := c.now()
	s := c.states
	s.mu.Lock()
	var ids []string
	for id, st := range s.m {
		if !st.openUntil.IsZero() && (now.Before(st.openUntil) || st.probing) {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// NotSent reports whether the attempt was recorded without being sent: it fell due while its
// endpoint's circuit was open.
func (a *Attempt) NotSent() bool { return a.Error == errCircuitOpen.Error() }
