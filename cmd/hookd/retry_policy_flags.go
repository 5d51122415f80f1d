package main

import (
	"fmt"
	"strings"
	"time"
)

// retryPolicyHelp describes the retry policy flags of endpoint add, endpoint update and app update.
const retryPolicyHelp = `Retry policy (--retry-schedule, --attempt-timeout):
  --retry-schedule 5s,1m,10m  the waits before each retry (their number is the number of
                              retries); none for no retries; inherit for the application's
                              (an application's: the server's)
  --attempt-timeout 10s       the time one attempt may take; inherit as above
  The server bounds both: at most as many retries as its own schedule, no wait over its
  longest, no timeout over its --max-timeout.

`

// retryPolicyFlags are the retry policy flags; each is sent only when given.
type retryPolicyFlags struct {
	schedule, timeout *string
}

func addRetryPolicyFlags(f *flags) *retryPolicyFlags {
	return &retryPolicyFlags{
		schedule: f.String("retry-schedule", "", "comma-separated `WAITS` before each retry, e.g. 5s,1m,10m; none for no retries; inherit to clear"),
		timeout:  f.String("attempt-timeout", "", "how long one attempt may take (`DURATION`, e.g. 10s); inherit to clear"),
	}
}

// fields returns the API fields (retrySchedule, timeoutSeconds) of the flags in given, a nil
// value being JSON null (inherit). A bad value is a usage error naming the flag.
func (p *retryPolicyFlags) fields(cmd string, given map[string]bool) (map[string]any, error) {
	out := map[string]any{}
	if given["retry-schedule"] {
		v := strings.TrimSpace(*p.schedule)
		switch strings.ToLower(v) {
		case "inherit":
			out["retrySchedule"] = nil
		case "none":
			out["retrySchedule"] = []float64{}
		default:
			secs := []float64{}
			for part := range strings.SplitSeq(v, ",") {
				d, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil || d < 0 {
					return nil, usageErrorf("use waits apart by commas, e.g. 5s,1m,10m, or none, or inherit", "%s: --retry-schedule: %q is not a wait", cmd, part)
				}
				secs = append(secs, d.Seconds())
			}
			out["retrySchedule"] = secs
		}
	}
	if given["attempt-timeout"] {
		v := strings.TrimSpace(*p.timeout)
		if strings.EqualFold(v, "inherit") {
			out["timeoutSeconds"] = nil
		} else {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, usageErrorf("use a duration above zero, e.g. 10s, or inherit", "%s: --attempt-timeout: %q is not a duration above zero", cmd, v)
			}
			out["timeoutSeconds"] = d.Seconds()
		}
	}
	return out, nil
}

// formatPolicy writes a retry policy read from the API: a schedule in seconds and a timeout.
func formatPolicy(schedule []float64, timeout *float64) (string, string) {
	s, t := "inherited", "inherited"
	if schedule != nil {
		parts := make([]string, len(schedule))
		for i, sec := range schedule {
			parts[i] = (time.Duration(sec * float64(time.Second))).Round(time.Millisecond).String()
		}
		s = cmpOr(strings.Join(parts, ","), "none")
	}
	if timeout != nil {
		t = fmt.Sprint(time.Duration(*timeout * float64(time.Second)).Round(time.Millisecond))
	}
	return s, t
}
