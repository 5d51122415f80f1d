package hookd

import "slices"

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
