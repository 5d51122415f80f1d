package hookd

import "time"

// retryDelay returns the wait before the retry that follows failed attempt n (1-based), and false
// when the schedule has no retry left. Each wait is spread by ±jitter.
func (c *Client) retryDelay(n int) (time.Duration, bool) {
	if n < 1 || n > len(c.cfg.RetrySchedule) {
		return 0, false
	}
	return jittered(c.cfg.RetrySchedule[n-1], c.cfg.Jitter, c.cfg.Rand()), true
}

// jittered spreads d by up to ±frac, with r uniform in [0, 1).
func jittered(d time.Duration, frac, r float64) time.Duration {
	if frac <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + frac*(2*r-1)))
}

// throttleDelay returns the wait after a throttling answer (429, 502, 504) or a Retry-After: the
// schedule's wait, but no less than the floor or what the receiver asked, within MaxRetryAfter.
func (c *Client) throttleDelay(scheduled, retryAfter time.Duration) time.Duration {
	d := max(scheduled, c.cfg.ThrottleFloor, min(retryAfter, c.cfg.MaxRetryAfter))
	return d
}
