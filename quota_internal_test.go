package hookd

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// fakeNow is a clock that moves only when told.
type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time { return f.t }

func TestAppRatesBucket(t *testing.T) {
	t.Parallel()
	clock := &fakeNow{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	r := newAppRates(2, 4, clock.now)
	for i := range 4 {
		if err := r.take("app_a"); err != nil {
			t.Fatalf("take %d of the burst: %v", i+1, err)
		}
	}
	for _, tc := range []struct {
		after time.Duration // the clock moves by this first
		ok    bool
		retry time.Duration // when refused
	}{
		{0, false, 500 * time.Millisecond},
		{200 * time.Millisecond, false, 300 * time.Millisecond},
		{300 * time.Millisecond, true, 0},
		{0, false, 500 * time.Millisecond},
		{10 * time.Second, true, 0}, // refilled, capped at the burst
		{0, true, 0},
		{0, true, 0},
		{0, true, 0},
		{0, false, 500 * time.Millisecond},
	} {
		clock.t = clock.t.Add(tc.after)
		err := r.take("app_a")
		var rl *RateLimitError
		switch {
		case tc.ok && err != nil:
			t.Fatalf("after %s: %v, want a message", tc.after, err)
		case !tc.ok && !errors.As(err, &rl):
			t.Fatalf("after %s: %v, want a RateLimitError", tc.after, err)
		case !tc.ok && (rl.RetryAfter < tc.retry-time.Millisecond || rl.RetryAfter > tc.retry+time.Millisecond):
			t.Fatalf("after %s: retry after %s, want %s", tc.after, rl.RetryAfter, tc.retry)
		}
	}
	if err := r.take("app_b"); err != nil {
		t.Fatalf("another application: %v", err)
	}
}

// Buckets that have refilled are dropped: sends from many applications leave only those of the
// last refill time.
func TestAppRatesDropIdleBuckets(t *testing.T) {
	t.Parallel()
	clock := &fakeNow{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	r := newAppRates(100, 100, clock.now) // refills in 1 s
	for i := range 10_000 {
		if err := r.take(fmt.Sprintf("app_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.size(); n != 10_000 {
		t.Fatalf("%d buckets, want 10000", n)
	}
	clock.t = clock.t.Add(1500 * time.Millisecond)
	if err := r.take("app_new"); err != nil {
		t.Fatal(err)
	}
	if n := r.size(); n != 1 {
		t.Fatalf("%d buckets after every idle one refilled, want 1", n)
	}
	// A bucket still refilling is kept by the next sweep, with what it owes.
	clock.t = clock.t.Add(500 * time.Millisecond)
	for range 100 {
		if err := r.take("app_busy"); err != nil {
			t.Fatal(err)
		}
	}
	clock.t = clock.t.Add(500 * time.Millisecond) // the next sweep is due; app_busy has 50
	for i := range 51 {
		err := r.take("app_busy")
		if i < 50 && err != nil {
			t.Fatalf("take %d after half a refill: %v", i+1, err)
		}
		if i == 50 && !errors.Is(err, ErrRateLimited) {
			t.Fatalf("take 51 after half a refill: %v, want ErrRateLimited", err)
		}
	}
	if n := r.size(); n != 1 {
		t.Fatalf("%d buckets, want app_busy's alone (app_new refilled)", n)
	}
}

// No rate is no limit, and a nil appRates too.
func TestAppRatesNone(t *testing.T) {
	t.Parallel()
	for _, r := range []*appRates{nil, newAppRates(0, 0, time.Now)} {
		for range 1000 {
			if err := r.take("app_a"); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A rate so small that its waits pass what a Duration holds waits the longest Duration, and its
// buckets are kept, not dropped as refilled.
func TestAppRatesTinyRate(t *testing.T) {
	t.Parallel()
	clock := &fakeNow{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	r := newAppRates(1e-15, 1, clock.now)
	if err := r.take("app_a"); err != nil {
		t.Fatal(err)
	}
	clock.t = clock.t.Add(24 * time.Hour)
	var rl *RateLimitError
	if err := r.take("app_a"); !errors.As(err, &rl) || rl.RetryAfter <= 24*time.Hour {
		t.Fatalf("second take: %v, want a RateLimitError with a wait beyond a day", err)
	}
	if n := r.size(); n != 1 {
		t.Fatalf("%d buckets, want the one still refilling", n)
	}
}
