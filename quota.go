package hookd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Quotas that keep one application from costing the others (and third parties) without limit.
const (
	// DefaultMaxEndpointsPerApp is Config.MaxEndpointsPerApp's default.
	DefaultMaxEndpointsPerApp = 100
	// DefaultMessageRatePerApp is the message rate hookd serve allows each application by
	// default (Config.MessageRatePerApp, which the library leaves unlimited).
	DefaultMessageRatePerApp = 1000
)

var (
	// ErrTooManyEndpoints: the application already has Config.MaxEndpointsPerApp endpoints.
	// Nothing was written; the error is an *EndpointLimitError. The API answers 422.
	ErrTooManyEndpoints = errors.New("too many endpoints")
	// ErrRateLimited: the application created messages faster than Config.MessageRatePerApp
	// allows. Nothing was written; the error is a *RateLimitError saying when to try again. The API
	// answers 429 with Retry-After.
	ErrRateLimited = errors.New("message rate limit exceeded")
)

// EndpointLimitError is an endpoint refused by Config.MaxEndpointsPerApp.
type EndpointLimitError struct {
	App string // the application's id
	Max int
}

func (e *EndpointLimitError) Error() string {
	return fmt.Sprintf("application %s has %d endpoints, the most it may have (Config.MaxEndpointsPerApp; hookd serve --max-endpoints-per-app): delete one first", e.App, e.Max)
}

// Unwrap returns ErrTooManyEndpoints.
func (e *EndpointLimitError) Unwrap() error { return ErrTooManyEndpoints }

// RateLimitError is a send refused by the per-application message rate.
type RateLimitError struct {
	App        string        // the application's id
	Rate       float64       // messages per second allowed
	RetryAfter time.Duration // until the application may send one message again
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("application %s sends more than %g messages per second; retry after %s", e.App, e.Rate, e.RetryAfter)
}

// Unwrap returns ErrRateLimited.
func (e *RateLimitError) Unwrap() error { return ErrRateLimited }

// checkEndpointQuota refuses a new endpoint for the application once it has max (negative: no
// limit). The store's count holds off concurrent creates in the same application until tx ends,
// so two of them cannot both take the last place.
func checkEndpointQuota(ctx context.Context, tx Tx, appID string, max int) error {
	if max < 0 {
		return nil
	}
	n, err := tx.LockEndpointCount(ctx, appID)
	if err != nil {
		return err
	}
	if n >= max {
		return &EndpointLimitError{App: appID, Max: max}
	}
	return nil
}

// appRates is a token bucket per application: each holds up to burst messages and refills at
// rate per second. A bucket that has refilled is dropped, since a new one starts full and so
// behaves the same: the map holds only the applications that sent within the last refill time
// (burst/rate), however many there are.
type appRates struct {
	rate  float64 // tokens per second; 0: no limit
	burst float64
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	nextSweep time.Time
}

type bucket struct {
	tokens float64
	at     time.Time // when tokens was computed
}

func newAppRates(rate float64, burst int, now func() time.Time) *appRates {
	if rate <= 0 || math.IsInf(rate, 1) {
		return &appRates{}
	}
	return &appRates{rate: rate, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// refill is how long an empty bucket takes to fill: past it, an idle bucket is dropped.
func (r *appRates) refill() time.Duration { return seconds(r.burst / r.rate) }

// seconds converts s seconds to a Duration, capped where a Duration ends (a tiny rate's waits).
func seconds(s float64) time.Duration {
	if s >= float64(math.MaxInt64/int64(time.Second)) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

// take takes one message from app's bucket, or returns a *RateLimitError when it is empty.
func (r *appRates) take(app string) error {
	if r == nil || r.rate == 0 {
		return nil
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !now.Before(r.nextSweep) {
		r.sweep(now)
	}
	b := r.buckets[app]
	if b == nil {
		b = &bucket{tokens: r.burst, at: now}
		r.buckets[app] = b
	} else if el := now.Sub(b.at); el > 0 {
		b.tokens = min(r.burst, b.tokens+el.Seconds()*r.rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return nil
	}
	wait := seconds((1 - b.tokens) / r.rate)
	return &RateLimitError{App: app, Rate: r.rate, RetryAfter: max(wait, time.Millisecond)}
}

// sweep drops the buckets that have refilled by now, and sets the next sweep one refill time
// later (at least a second), so its cost is spread over the sends of that time.
func (r *appRates) sweep(now time.Time) {
	full := r.refill()
	for app, b := range r.buckets {
		if now.Sub(b.at) >= full {
			delete(r.buckets, app)
		}
	}
	r.nextSweep = now.Add(max(full, time.Second))
}

// size is the number of buckets held.
func (r *appRates) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
