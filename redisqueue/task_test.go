package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hookd/hookd"
)

func TestJobRoundTrip(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("UTC+1", 3600)
	for _, j := range []hookd.Job{
		{DeliveryID: "dlv_1", Attempt: 1, Trigger: hookd.TriggerScheduled},
		{DeliveryID: "dlv_2", Attempt: 7, Trigger: hookd.TriggerScheduled, NotBefore: time.Date(2026, 3, 1, 12, 0, 0, 123456321, zone)},
		{DeliveryID: "dlv_3", Attempt: 3, Trigger: hookd.TriggerManual, NotBefore: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
	} {
		b, err := encodeJob(j)
		if err != nil {
			t.Fatalf("encodeJob: %v", err)
		}
		got, err := decodeJob(b)
		if err != nil {
			t.Fatalf("decodeJob(%s): %v", b, err)
		}
		if got.DeliveryID != j.DeliveryID || got.Attempt != j.Attempt || got.Trigger != j.Trigger ||
			!got.NotBefore.Equal(j.NotBefore.Truncate(time.Microsecond)) || got.NotBefore.IsZero() != j.NotBefore.IsZero() {
			t.Errorf("%s came back as %+v, want %+v", b, got, j)
		}
	}
	for _, bad := range []string{`{`, `{"a":1}`, `[]`} {
		if _, err := decodeJob([]byte(bad)); err == nil {
			t.Errorf("decodeJob(%s) returned no error", bad)
		}
	}
}

func TestTaskIDAndQueueName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		job       hookd.Job
		id, queue string
	}{
		{hookd.Job{DeliveryID: "dlv_a", Attempt: 1, Trigger: hookd.TriggerScheduled}, "dlv_a:1:scheduled", "ns:first"},
		{hookd.Job{DeliveryID: "dlv_a", Attempt: 2, Trigger: hookd.TriggerScheduled, NotBefore: time.Now()}, "dlv_a:2:scheduled", "ns:retry"},
		{hookd.Job{DeliveryID: "dlv_a", Attempt: 2, Trigger: hookd.TriggerManual}, "dlv_a:2:manual", "ns:manual"},
	} {
		if got := TaskID(tc.job); got != tc.id {
			t.Errorf("TaskID(%+v) = %q, want %q", tc.job, got, tc.id)
		}
		if got := QueueName("ns", tc.job.Lane()); got != tc.queue {
			t.Errorf("QueueName(ns, %s) = %q, want %q", tc.job.Lane(), got, tc.queue)
		}
	}
}

func TestRetryDelayUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 400_000_000, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want time.Duration
	}{
		{now.Add(100 * time.Millisecond), 600 * time.Millisecond},   // 09:00:00.5 -> 09:00:01
		{now.Add(600 * time.Millisecond), 600 * time.Millisecond},   // 09:00:01 exactly
		{now.Add(601 * time.Millisecond), 1600 * time.Millisecond},  // just past a second -> the next
		{now.Add(1100 * time.Millisecond), 1600 * time.Millisecond}, // 09:00:01.5 -> 09:00:02
		{now.Add(-2 * time.Second), 0},                              // in the past
		{now.Add(time.Minute + 600*time.Millisecond), time.Minute + 600*time.Millisecond},
	} {
		got := retryDelayUntil(now, tc.at)
		if got != tc.want {
			t.Errorf("retryDelayUntil(%s) = %s, want %s", tc.at.Format("15:04:05.000"), got, tc.want)
		}
		// The property that matters: asynq's score (the Unix second of now + delay) is not
		// before at, so the forwarder never moves the task early.
		if score := now.Add(got).Unix(); tc.at.After(now) && time.Unix(score, 0).Before(tc.at) {
			t.Errorf("retryDelayUntil(%s): score %d is before at", tc.at.Format("15:04:05.000"), score)
		}
	}
}

func TestRetryDelayAndIsFailure(t *testing.T) {
	t.Parallel()
	q := &Queue{}
	in := func(d time.Duration) time.Time { return time.Now().Add(d) }
	for _, tc := range []struct {
		name     string
		n        int
		err      error
		failure  bool
		min, max time.Duration
	}{
		{"snooze", 0, hookd.Snooze(300*time.Millisecond, "busy"), false, 300 * time.Millisecond, 1300 * time.Millisecond},
		{"wrapped snooze", 4, fmt.Errorf("work: %w", hookd.Snooze(2*time.Second, "busy")), false, 2 * time.Second, 3 * time.Second},
		{"early", 0, &earlyError{at: in(5 * time.Second)}, false, 4900 * time.Millisecond, 5 * time.Second},
		{"given back at stop", 0, errStopping, false, 0, 0},
		{"cancelled by stop", 0, fmt.Errorf("post: %w", context.Canceled), false, 0, 0},
		{"lease expired", 3, asynq.ErrLeaseExpired, false, 0, 0},
		{"first failure", 0, errors.New("database is locked"), true, time.Second, 2 * time.Second},
		{"third failure", 2, errors.New("database is locked"), true, 4 * time.Second, 5 * time.Second},
		{"job timeout", 9, context.DeadlineExceeded, true, time.Minute, time.Minute + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isFailure(tc.err); got != tc.failure {
				t.Errorf("isFailure = %v, want %v", got, tc.failure)
			}
			d := q.retryDelay(tc.n, tc.err, nil)
			if d < tc.min || d > tc.max {
				t.Errorf("retryDelay = %s, want %s to %s", d, tc.min, tc.max)
			}
		})
	}
}

func TestTaskOptionsScheduleALeadAhead(t *testing.T) {
	t.Parallel()
	tm := newTiming(Config{ForwardInterval: 50 * time.Millisecond, PollInterval: 20 * time.Millisecond}, 200*time.Millisecond)
	if tm.lead != 100*time.Millisecond || tm.maxHold != 1600*time.Millisecond {
		t.Errorf("lead %s, maxHold %s; want 100ms and 1.6s", tm.lead, tm.maxHold)
	}
	// asynq keeps a task's timeout in whole seconds: 0.2 s + 1.6 s rounds up to 2 s, plus one.
	if tm.taskTimeout != 3*time.Second {
		t.Errorf("taskTimeout %s, want 3s", tm.taskTimeout)
	}
	now := time.Now()
	count := func(j hookd.Job) int { return len(tm.taskOptions("ns", j, now)) }
	base := count(hookd.Job{DeliveryID: "d", Attempt: 1})
	for _, tc := range []struct {
		ahead     time.Duration
		scheduled bool
	}{{-time.Second, false}, {50 * time.Millisecond, false}, {100 * time.Millisecond, false}, {101 * time.Millisecond, true}, {time.Hour, true}} {
		got := count(hookd.Job{DeliveryID: "d", Attempt: 2, NotBefore: now.Add(tc.ahead)}) > base
		if got != tc.scheduled {
			t.Errorf("NotBefore %s ahead: scheduled %v, want %v", tc.ahead, got, tc.scheduled)
		}
	}
}

func TestNamespacePattern(t *testing.T) {
	t.Parallel()
	for ns, ok := range map[string]bool{
		"hookd": true, "prod.eu-1_b": true, "A": true,
		"": false, "a:b": false, "a b": false, "a{b}": false, "é": false, "a*": false,
	} {
		if got := namespacePattern.MatchString(ns); got != ok {
			t.Errorf("namespace %q accepted %v, want %v", ns, got, ok)
		}
	}
	long := ""
	for range 64 {
		long += "n"
	}
	if !namespacePattern.MatchString(long) || namespacePattern.MatchString(long+"n") {
		t.Error("a namespace of 64 characters is valid, one of 65 is not")
	}
}
