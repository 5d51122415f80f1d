package riverqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{0, time.Second},
		{1, time.Second},
		{2, 2 * time.Second},
		{3, 4 * time.Second},
		{6, 32 * time.Second},
		{7, time.Minute},
		{8, time.Minute},
		{9_999, time.Minute},
	} {
		if got := retryDelay(tc.attempt); got != tc.want {
			t.Errorf("retryDelay(%d) = %s, want %s", tc.attempt, got, tc.want)
		}
	}
}

func TestEarlyPlan(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		wait, hold, sleep, snooze time.Duration
	}{
		{wait: 10 * ms, hold: 40 * ms, sleep: 10 * ms},
		{wait: 40 * ms, hold: 40 * ms, sleep: 40 * ms},
		{wait: 41 * ms, hold: 40 * ms, snooze: 1 * ms},
		{wait: 4 * time.Second, hold: 200 * ms, snooze: 3800 * ms},
		{wait: 5200 * ms, hold: 200 * ms, snooze: 5000 * ms},
		{wait: 5201 * ms, hold: 200 * ms, snooze: 201 * ms},
		{wait: time.Hour, hold: 200 * ms, snooze: time.Hour - 5*time.Second},
	} {
		sleep, snooze := earlyPlan(tc.wait, tc.hold)
		if sleep != tc.sleep || snooze != tc.snooze {
			t.Errorf("earlyPlan(%s, %s) = sleep %s, snooze %s; want %s, %s", tc.wait, tc.hold, sleep, snooze, tc.sleep, tc.snooze)
		}
	}
}

func TestInsertOpts(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		job       hookd.Job
		queue     string
		scheduled time.Time
	}{
		{"now", hookd.Job{Attempt: 1}, QueueFirst, time.Time{}},
		{"past", hookd.Job{Attempt: 2, NotBefore: now.Add(-time.Hour)}, QueueRetry, time.Time{}},
		{"within 5s", hookd.Job{Attempt: 2, NotBefore: now.Add(5 * time.Second)}, QueueRetry, time.Time{}},
		{"beyond 5s", hookd.Job{Attempt: 3, NotBefore: now.Add(time.Hour)}, QueueRetry, now.Add(time.Hour - 5*time.Second)},
		{"manual", hookd.Job{Attempt: 1, Trigger: hookd.TriggerManual}, QueueManual, time.Time{}},
	} {
		o := insertOpts(tc.job, now)
		if o.Queue != tc.queue || !o.ScheduledAt.Equal(tc.scheduled) || o.MaxAttempts != maxAttempts {
			t.Errorf("%s: queue %q, scheduled %s, max attempts %d; want %q, %s, %d",
				tc.name, o.Queue, o.ScheduledAt, o.MaxAttempts, tc.queue, tc.scheduled, maxAttempts)
		}
	}
}

func TestArgsRoundTrip(t *testing.T) {
	t.Parallel()
	nb := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	for _, tc := range []struct {
		job  hookd.Job
		json string
	}{
		{hookd.Job{DeliveryID: "dlv_1", Attempt: 1, Trigger: hookd.TriggerScheduled},
			`{"d":"dlv_1","a":1,"t":"scheduled"}`},
		{hookd.Job{DeliveryID: "org:42-x", Attempt: 7, Trigger: hookd.TriggerManual, NotBefore: nb},
			`{"d":"org:42-x","a":7,"t":"manual","nb":1796040000123456}`},
		{hookd.Job{DeliveryID: "dlv_2"}, `{"d":"dlv_2","a":0}`},
	} {
		b, err := json.Marshal(argsOf(tc.job))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.json {
			t.Errorf("args of %+v = %s, want %s", tc.job, b, tc.json)
		}
		var a attemptArgs
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		want := tc.job
		want.NotBefore = want.NotBefore.Truncate(time.Microsecond)
		if got := a.job(); got != want {
			t.Errorf("round trip of %+v = %+v", want, got)
		}
	}
}

func TestRiverLogger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level    slog.Level
		infoSeen bool
	}{
		{slog.LevelInfo, false},
		{slog.LevelDebug, true},
	} {
		var buf bytes.Buffer
		l := riverLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})))
		l.Info("job errored; retrying")
		l.With("job_id", 1).Warn("failed to complete job")
		out := buf.String()
		if got := strings.Contains(out, "retrying"); got != tc.infoSeen {
			t.Errorf("caller at %s: River's Info shown %v, want %v", tc.level, got, tc.infoSeen)
		}
		if !strings.Contains(out, "failed to complete job") || !strings.Contains(out, "component=river") {
			t.Errorf("caller at %s: River's Warn not shown as expected: %q", tc.level, out)
		}
	}
	if riverLogger(nil) == nil || !riverLogger(nil).Enabled(context.Background(), slog.LevelError) {
		t.Error("riverLogger(nil) must log errors to slog.Default")
	}
}
