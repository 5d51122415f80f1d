package hookd

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestJobLimiterBoundsActiveJobs(t *testing.T) {
	l := &jobLimiter{limit: 2}
	ctx := context.Background()
	r1, err := l.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := l.acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	// The third waits for a place: the first two's timers give theirs back after slowJob at the
	// earliest, so released by hand first, it must be the one that lets the third in.
	r1()
	r1() // a second call gives nothing back twice
	r3 := <-got
	l.mu.Lock()
	active := l.active
	l.mu.Unlock()
	if active != 2 {
		t.Errorf("active %d after one release and one grant, want 2", active)
	}
	r3()
}

func TestJobLimiterSlowJobGivesItsPlaceBack(t *testing.T) {
	l := &jobLimiter{limit: 1}
	ctx := context.Background()
	start := time.Now()
	r1, err := l.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	r2, err := l.acquire(ctx) // the first is still "running": its place comes back after slowJob
	if err != nil {
		t.Fatal(err)
	}
	defer r2()
	if el := time.Since(start); el < slowJob {
		t.Errorf("second place granted after %s, before the first job had run %s", el, slowJob)
	}
}

func TestJobLimiterCancelledWaiterLeaves(t *testing.T) {
	l := &jobLimiter{limit: 1}
	r1, err := l.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.acquire(ctx); err == nil {
		t.Fatal("acquire with a cancelled context and no place returned no error")
	}
	l.mu.Lock()
	waiters := len(l.waiters)
	l.mu.Unlock()
	if waiters != 0 {
		t.Errorf("%d waiters left after cancellation", waiters)
	}
	r1()
}

func TestNewLimiters(t *testing.T) {
	ls := newLimiters(map[Lane]int{LaneManual: 3}, 16, false)
	for lane, want := range map[Lane]int{LaneFirst: 16, LaneRetry: 16, LaneManual: 3} {
		if got := ls[lane].limit; got != want {
			t.Errorf("lane %s limit %d, want %d", lane, got, want)
		}
	}
	for _, l := range newLimiters(nil, -1, true) {
		if l.limit != 0 {
			t.Errorf("negative ActiveWorkers: limit %d, want none", l.limit)
		}
	}
	for _, l := range newLimiters(nil, 0, false) {
		if l.limit != 0 {
			t.Errorf("default with a database apart: limit %d, want none", l.limit)
		}
	}
	if got, want := newLimiters(nil, 0, true)[LaneFirst].limit, min(100, 4*runtime.GOMAXPROCS(0)); got != want {
		t.Errorf("default with an in-process database: limit %d, want %d", got, want)
	}
	r, err := newLimiters(nil, -1, false)[LaneFirst].acquire(context.Background())
	if err != nil || r == nil {
		t.Fatalf("unbounded acquire: %v", err)
	}
	r()
}
