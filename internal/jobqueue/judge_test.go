package jobqueue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestJudge pins the snooze and failure policy.
func TestJudge(t *testing.T) {
	t.Parallel()
	failed := errors.New("database is locked")
	tests := []struct {
		name     string
		err      error
		stopped  bool
		failures int
		want     verdict
	}{
		{"worked", nil, false, 3, verdict{result: Done, failures: 3}},
		{"worked, though stopped", nil, true, 0, verdict{result: Done}},
		{"snoozed", hookd.Snooze(5*time.Second, "endpoint busy"), false, 2, verdict{result: Again, delay: 5 * time.Second, failures: 2}},
		{"snoozed, wrapped", fmt.Errorf("work: %w", hookd.Snooze(time.Second, "circuit open")), false, 0, verdict{result: Again, delay: time.Second}},
		{"snoozed for nothing", hookd.Snooze(0, "now"), false, 0, verdict{result: Again, delay: time.Millisecond}},
		{"snoozed while stopping", hookd.Snooze(time.Minute, "busy"), true, 1, verdict{result: Again, delay: time.Minute, failures: 1}},
		{"failed while stopping", failed, true, 4, verdict{result: Released, failures: 4}},
		{"first failure", failed, false, 0, verdict{result: Again, delay: time.Second, failures: 1}},
		{"third failure", failed, false, 2, verdict{result: Again, delay: 4 * time.Second, failures: 3}},
		{"failure at the ceiling", failed, false, 50, verdict{result: Again, delay: time.Minute, failures: 51}},
		{"last failure", failed, false, MaxFailures - 1, verdict{result: Done, failures: MaxFailures, dropped: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := judge(tt.err, tt.stopped, tt.failures); got != tt.want {
				t.Errorf("judge(%v, stopped %v, %d failures) = %+v, want %+v", tt.err, tt.stopped, tt.failures, got, tt.want)
			}
		})
	}
}
