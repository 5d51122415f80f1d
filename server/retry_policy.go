package server

import (
	"fmt"
	"math"
	"time"
)

// An endpoint's or application's retry policy, hookd's own fields of today's generation:
// retrySchedule, the waits before each retry in seconds ([] for no retries, null to inherit), and
// timeoutSeconds, the attempt timeout (null to inherit). Absent, both stay as they are, on PUT
// too, as hookd's other settings do. The bounds of this server (Config.MaxTimeout, the length
// and longest wait of Config.RetrySchedule) are the library's to check.

// maxPolicySeconds bounds what the API converts to a duration: beyond it every server's bound is
// passed, and the conversion stays clear of overflow.
const maxPolicySeconds = 100 * 365 * 24 * 3600

// policyDuration converts seconds given for field to a duration to the millisecond.
func policyDuration(field string, sec float64) (time.Duration, error) {
	if sec < 0 || math.IsNaN(sec) {
		return 0, invalidField("body", field, fmt.Sprintf("%g: must be zero or positive seconds", sec))
	}
	sec = min(sec, maxPolicySeconds)
	return time.Duration(math.Round(sec*1000)) * time.Millisecond, nil
}

// scheduleIn converts a retrySchedule given in seconds.
func scheduleIn(secs []float64) ([]time.Duration, error) {
	out := make([]time.Duration, len(secs))
	for i, s := range secs {
		d, err := policyDuration("retrySchedule", s)
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// timeoutIn converts a timeoutSeconds, which must be above zero (null inherits).
func timeoutIn(sec float64) (time.Duration, error) {
	d, err := policyDuration("timeoutSeconds", sec)
	if err == nil && d <= 0 {
		err = invalidField("body", "timeoutSeconds", "must be at least 0.001 seconds, or null to inherit")
	}
	return d, err
}

// scheduleOut writes a schedule in seconds, nil (null) when it inherits.
func scheduleOut(s []time.Duration) []float64 {
	if s == nil {
		return nil
	}
	out := make([]float64, len(s))
	for i, d := range s {
		out[i] = d.Seconds()
	}
	return out
}

// timeoutOut writes a timeout in seconds, nil (null) when it inherits.
func timeoutOut(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}

// policyPatch is the retry policy as a body gives it: each part absent (stays), null (inherits)
// or a value.
type policyPatch struct {
	schedule optional[[]float64]
	timeout  optional[float64]
}

// applyTo writes the parts given onto schedule and timeout.
func (p policyPatch) applyTo(schedule *[]time.Duration, timeout *time.Duration) error {
	if p.schedule.Set {
		*schedule = nil
		if !p.schedule.Null {
			s, err := scheduleIn(p.schedule.Value)
			if err != nil {
				return err
			}
			*schedule = s
		}
	}
	if p.timeout.Set {
		*timeout = 0
		if !p.timeout.Null {
			d, err := timeoutIn(p.timeout.Value)
			if err != nil {
				return err
			}
			*timeout = d
		}
	}
	return nil
}
