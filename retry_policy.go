package hookd

import (
	"fmt"
	"slices"
	"time"

	"github.com/hookd/hookd/delivery"
)

// An endpoint's retry policy is its retry schedule and its attempt timeout. Each part is the
// endpoint's own when it sets one, else its application's, else the server's (Config.RetrySchedule,
// the delivery timeout). The worker's copy of an endpoint holds the parts it inherits from its
// application (Client.endpoint); what is left unset there is the server's.

// retryDelay returns the wait before the retry that follows failed attempt n (1-based) to ep, and
// false when ep's schedule has no retry left. Each wait is spread by ±jitter.
func (c *Client) retryDelay(ep *Endpoint, n int) (time.Duration, bool) {
	schedule := c.cfg.RetrySchedule
	if ep.RetrySchedule != nil {
		schedule = ep.RetrySchedule
	}
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	return jittered(schedule[n-1], c.cfg.Jitter, c.cfg.Rand()), true
}

// attemptTimeout is the time one attempt to ep may take.
func (c *Client) attemptTimeout(ep *Endpoint) time.Duration {
	if ep.AttemptTimeout > 0 {
		return ep.AttemptTimeout
	}
	return c.cfg.Delivery.Timeout
}

// inheritPolicy fills in the parts of ep's retry policy it leaves to its application.
func inheritPolicy(ep *Endpoint, app *Application) {
	if ep.RetrySchedule == nil {
		ep.RetrySchedule = cloneSchedule(app.RetrySchedule)
	}
	if ep.AttemptTimeout == 0 {
		ep.AttemptTimeout = app.AttemptTimeout
	}
}

// attemptBound is the delivery client's configuration: the server's, with the longest attempt
// an endpoint may set as its bound. Each attempt's own timeout (delivery.Request.Timeout) is
// shorter or the same.
func attemptBound(c *Config) *delivery.Config {
	d := *c.Delivery
	d.Timeout = c.MaxTimeout
	return &d
}

// CheckRetryPolicy says whether an endpoint or application may set this retry policy on this
// server: a schedule (nil: inherit) of at most len(Config.RetrySchedule) retries, each wait zero
// or positive, a whole number of milliseconds and at most the server schedule's longest wait;
// an attempt timeout (0: inherit) that is positive, a whole number of milliseconds and at most
// Config.MaxTimeout. A refusal is a *ValidationError naming retrySchedule or timeoutSeconds.
func (c *Client) CheckRetryPolicy(schedule []time.Duration, timeout time.Duration) error {
	if schedule != nil {
		limit := len(c.cfg.RetrySchedule)
		if len(schedule) > limit {
			return invalid("retrySchedule", fmt.Sprintf("has %d retries; this server allows at most %d (the length of its own schedule)", len(schedule), limit))
		}
		longest := slices.Max(append([]time.Duration{0}, c.cfg.RetrySchedule...))
		for i, d := range schedule {
			switch {
			case d < 0:
				return invalid("retrySchedule", fmt.Sprintf("wait %d is %s: waits must be zero or positive", i+1, d))
			case d%time.Millisecond != 0:
				return invalid("retrySchedule", fmt.Sprintf("wait %d is %s: use whole milliseconds", i+1, d))
			case d > longest:
				return invalid("retrySchedule", fmt.Sprintf("wait %d is %s: this server allows waits of at most %s (the longest of its own schedule)", i+1, d, longest))
			}
		}
	}
	switch {
	case timeout < 0:
		return invalid("timeoutSeconds", fmt.Sprintf("is %s: must be positive, or unset to inherit", timeout))
	case timeout%time.Millisecond != 0:
		return invalid("timeoutSeconds", fmt.Sprintf("is %s: use whole milliseconds", timeout))
	case timeout > c.cfg.MaxTimeout:
		return invalid("timeoutSeconds", fmt.Sprintf("is %s: this server allows at most %s (--max-timeout)", timeout, c.cfg.MaxTimeout))
	}
	return nil
}

// cloneSchedule copies a schedule, keeping nil (inherit) apart from empty (no retries).
func cloneSchedule(s []time.Duration) []time.Duration {
	if s == nil {
		return nil
	}
	return append([]time.Duration{}, s...)
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
