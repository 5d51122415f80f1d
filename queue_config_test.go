package hookd

import (
	"errors"
	"testing"
	"time"
)

func TestQueueConfigResolve(t *testing.T) {
	w, timeout, err := (*QueueConfig)(nil).Resolve()
	if err != nil || w[LaneFirst] != 100 || w[LaneRetry] != 50 || w[LaneManual] != 10 || timeout != time.Minute {
		t.Fatalf("nil config: %v %s %v, want 100/50/10 and 1m", w, timeout, err)
	}
	w, timeout, err = (&QueueConfig{Workers: map[Lane]int{LaneRetry: 3}, JobTimeout: time.Second}).Resolve()
	if err != nil || w[LaneFirst] != 100 || w[LaneRetry] != 3 || timeout != time.Second {
		t.Fatalf("partial config: %v %s %v", w, timeout, err)
	}
	for name, c := range map[string]*QueueConfig{
		"unknown lane":     {Workers: map[Lane]int{"fast": 1}},
		"negative workers": {Workers: map[Lane]int{LaneFirst: -1}},
		"too many workers": {Workers: map[Lane]int{LaneFirst: MaxLaneWorkers + 1}},
		"negative timeout": {JobTimeout: -time.Second},
	} {
		_, _, err := c.Resolve()
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want a *ValidationError", name, err)
		}
	}
}

func TestFailedJobDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 6: 32 * time.Second, 7: time.Minute, 1000: time.Minute} {
		if got := FailedJobDelay(n); got != want {
			t.Errorf("FailedJobDelay(%d) = %s, want %s", n, got, want)
		}
	}
}
