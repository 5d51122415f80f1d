package delivery

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Outcome is what one attempt means for the delivery.
type Outcome int

// The outcomes of an attempt. The zero value is not an outcome.
const (
	// Success is a 2xx answer: the receiver accepted the message.
	Success Outcome = iota + 1
	// Gone is a 410 answer: the receiver asks never to be called again, and
	// the caller disables the endpoint.
	Gone
	// Throttled is a 429, 502 or 504 answer: the receiver is overloaded, and
	// the next attempt waits at least as long as it asked (Retry-After).
	Throttled
	// Redirect is a 3xx answer. Redirects are never followed: the signed
	// payload would go to a host nobody checked.
	Redirect
	// Failure is anything else: another status, or no usable response at all
	// (Result.Err says why).
	Failure
)

// String returns the outcome's name in lower case, as stored and shown.
func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Gone:
		return "gone"
	case Throttled:
		return "throttled"
	case Redirect:
		return "redirect"
	case Failure:
		return "failure"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Classify maps an HTTP status code to an [Outcome]. It is the one place
// statuses are classified.
func Classify(status int) Outcome {
	switch {
	case status >= 200 && status <= 299:
		return Success
	case status == http.StatusGone:
		return Gone
	case status == http.StatusTooManyRequests,
		status == http.StatusBadGateway,
		status == http.StatusGatewayTimeout:
		return Throttled
	case status >= 300 && status <= 399:
		return Redirect
	}
	return Failure
}

// ParseRetryAfter parses a Retry-After header value in either form: a number
// of seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT"), the
// latter measured from now. A date in the past gives 0, true. A value that is
// neither form (empty, negative, fractional, garbage) gives 0, false. A
// number of seconds too large for a time.Duration is capped at the largest
// one.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > math.MaxInt64/uint64(time.Second) {
			// Only overflow gets here: every character is a digit.
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		return 0, true
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
