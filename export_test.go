package hookd

import "time"

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

// SetUnstartedWarningForTest sets how long deliveries wait on a client never started before it
// warns (DefaultUnstartedWarning).
func (c *Client) SetUnstartedWarningForTest(d time.Duration) { c.watch.after = d }

// UnstartedChecksForTest returns how many times the client looked whether a delivery waits on
// it unworked, and whether a check is armed (or the warning given).
func (c *Client) UnstartedChecksForTest() (checks int64, armed bool) {
	return c.watch.checks.Load(), c.watch.armed.Load()
}

// CheckUnstartedForTest runs at once the check the watch armed, in place of its timer.
func (c *Client) CheckUnstartedForTest() {
	w := &c.watch
	w.mu.Lock()
	stopped := w.timer != nil && w.timer.Stop()
	id := w.delivery
	w.mu.Unlock()
	if stopped {
		c.checkUnworked(id, w.after)
	}
}
