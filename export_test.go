package hookd

// What the external tests of the root package read of a client's insides.

// SnoozedForTest returns how many jobs the client's workers snoozed because of their endpoint's
// isolation (its cap, rate limit, throttling or circuit).
func (c *Client) SnoozedForTest() int64 { return c.snoozed.Load() }

// HeldSlotsForTest returns how many of the endpoint's leased slots the client holds.
func (c *Client) HeldSlotsForTest(endpointID string) int {
	c.states.mu.Lock()
	defer c.states.mu.Unlock()
	if st := c.states.m[endpointID]; st != nil {
		return st.held
	}
	return 0
}
