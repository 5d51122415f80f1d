package redisqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/redisqueue"
)

func TestNewRefusesBadInput(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	for _, tc := range []struct {
		name  string
		url   string
		store hookd.Store
		qcfg  *hookd.QueueConfig
		cfg   *redisqueue.Config
		field string
	}{
		{"nil config", "redis://127.0.0.1:6379/0", store, nil, nil, "Config.Namespace"},
		{"no namespace", "redis://127.0.0.1:6379/0", store, nil, &redisqueue.Config{}, "Config.Namespace"},
		{"namespace with a colon", "redis://127.0.0.1:6379/0", store, nil, &redisqueue.Config{Namespace: "a:b"}, "Config.Namespace"},
		{"namespace too long", "redis://127.0.0.1:6379/0", store, nil, &redisqueue.Config{Namespace: strings.Repeat("n", 65)}, "Config.Namespace"},
		{"negative sweep interval", "redis://127.0.0.1:6379/0", store, nil, &redisqueue.Config{Namespace: "hookd", SweepInterval: -time.Second}, "Config.SweepInterval"},
		{"nil store", "redis://127.0.0.1:6379/0", nil, nil, &redisqueue.Config{Namespace: "hookd"}, "store"},
		{"bad lane workers", "redis://127.0.0.1:6379/0", store, &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: -1}}, &redisqueue.Config{Namespace: "hookd"}, "QueueConfig.Workers"},
		{"not a Redis URL", "http://127.0.0.1:6379", store, nil, &redisqueue.Config{Namespace: "hookd"}, "redisURL"},
		{"bad database", "redis://127.0.0.1:6379/x", store, nil, &redisqueue.Config{Namespace: "hookd"}, "redisURL"},
		{"option asynq cannot carry", "redis://127.0.0.1:6379/0?client_name=hookd", store, nil, &redisqueue.Config{Namespace: "hookd"}, "redisURL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := redisqueue.New(tc.url, tc.store, tc.qcfg, tc.cfg)
			if q != nil {
				q.Close()
			}
			var ve *hookd.ValidationError
			if !errors.Is(err, hookd.ErrInvalid) || !errors.As(err, &ve) {
				t.Fatalf("New returned %v, want a *hookd.ValidationError", err)
			}
			if ve.Field != tc.field {
				t.Errorf("error names field %q, want %q (%v)", ve.Field, tc.field, err)
			}
		})
	}
}

func TestNewKeepsThePasswordOutOfErrors(t *testing.T) {
	t.Parallel()
	_, err := redisqueue.New("redis://user:s3cret-pw@127.0.0.1:6379/0?max_retries=3", openStore(t), nil, &redisqueue.Config{Namespace: "hookd"})
	if err == nil {
		t.Fatal("New accepted max_retries, which asynq's connection options cannot carry")
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestStartFailsWhenRedisIsUnreachable(t *testing.T) {
	t.Parallel()
	q, err := redisqueue.New("redis://127.0.0.1:1/0?dial_timeout=200ms", openStore(t), nil, &redisqueue.Config{Namespace: "hookd", Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer q.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := q.Start(ctx, func(context.Context, hookd.Job) error { return nil }); err == nil {
		t.Fatal("Start returned nil with no Redis listening")
	}
}

// TestNamespacesAreIsolated: two queues in two namespaces of one Redis never see each other's
// jobs, and the same job (one task id) enqueued in both runs once in each.
func TestNamespacesAreIsolated(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	store := openStore(t)
	qa := newQueue(t, u, store, nil, nil)
	qb := newQueue(t, u, store, nil, nil)
	reca, recb := queuetest.NewRecorder(nil), queuetest.NewRecorder(nil)
	start(t, qa, reca.Handle)
	start(t, qb, recb.Handle)

	shared := hookd.Job{DeliveryID: "dlv_shared", Attempt: 1, Trigger: hookd.TriggerScheduled}
	var ja, jb []hookd.Job
	for i := range 5 {
		for _, lane := range []struct {
			attempt int
			trigger hookd.AttemptTrigger
		}{{1, hookd.TriggerScheduled}, {2, hookd.TriggerScheduled}, {3, hookd.TriggerManual}} {
			ja = append(ja, hookd.Job{DeliveryID: fmt.Sprintf("dlv_a_%d_%d", i, lane.attempt), Attempt: lane.attempt, Trigger: lane.trigger})
			jb = append(jb, hookd.Job{DeliveryID: fmt.Sprintf("dlv_b_%d_%d", i, lane.attempt), Attempt: lane.attempt, Trigger: lane.trigger})
		}
	}
	enqueue(t, store, qa, append(ja, shared)...)
	enqueue(t, store, qb, append(jb, shared)...)

	reca.Wait(t, len(ja)+1, 10*time.Second)
	recb.Wait(t, len(jb)+1, 10*time.Second)
	time.Sleep(settle)
	for _, tc := range []struct {
		name  string
		rec   *queuetest.Recorder
		own   string
		count int
	}{{qa.Namespace(), reca, "dlv_a_", len(ja)}, {qb.Namespace(), recb, "dlv_b_", len(jb)}} {
		calls, _ := tc.rec.Snapshot()
		n := perDelivery(calls)
		for id, c := range n {
			if id != shared.DeliveryID && !strings.HasPrefix(id, tc.own) {
				t.Errorf("namespace %s's handler got %s (%d times), a job of the other namespace", tc.name, id, c)
			}
			if c != 1 {
				t.Errorf("namespace %s's handler got %s %d times, want once", tc.name, id, c)
			}
		}
		if len(n) != tc.count+1 {
			t.Errorf("namespace %s's handler got %d jobs, want %d", tc.name, len(n), tc.count+1)
		}
	}
}

// TestNotBeforeIsMetPrecisely is the bound: a job with a NotBefore 200 ms ahead is handed
// over no earlier than NotBefore and within 250 ms of enqueue + 200 ms, in every lane. It is not
// parallel, so it runs alone.
func TestNotBeforeIsMetPrecisely(t *testing.T) {
	const ahead, bound = 200 * time.Millisecond, 250 * time.Millisecond
	u := redisURL(t)
	store := openStore(t)
	q := newQueue(t, u, store, nil, nil)
	rec := queuetest.NewRecorder(nil)
	start(t, q, rec.Handle)

	jobs := map[string]hookd.Job{}
	enqueuedAt := map[string]time.Time{}
	for round := range 3 {
		for _, j := range []hookd.Job{
			{DeliveryID: fmt.Sprintf("dlv_first_%d", round), Attempt: 1, Trigger: hookd.TriggerScheduled},
			{DeliveryID: fmt.Sprintf("dlv_retry_%d", round), Attempt: 2, Trigger: hookd.TriggerScheduled},
			{DeliveryID: fmt.Sprintf("dlv_manual_%d", round), Attempt: 2, Trigger: hookd.TriggerManual},
		} {
			now := time.Now()
			j.NotBefore = now.Add(ahead)
			enqueue(t, store, q, j)
			jobs[j.DeliveryID], enqueuedAt[j.DeliveryID] = j, now
		}
		// Spread the rounds over a second boundary or two: asynq schedules in whole seconds.
		time.Sleep(350 * time.Millisecond)
	}
	rec.Wait(t, len(jobs), 5*time.Second)
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	if len(calls) != len(jobs) {
		t.Errorf("handler called %d times, want %d", len(calls), len(jobs))
	}
	for _, c := range calls {
		j := jobs[c.Job.DeliveryID]
		late := c.At.Sub(j.NotBefore)
		t.Logf("%s (%s lane): called %s after NotBefore", j.DeliveryID, j.Lane(), late)
		if c.At.Before(j.NotBefore) {
			t.Errorf("%s called %s before its NotBefore", j.DeliveryID, -late)
		}
		if due := enqueuedAt[j.DeliveryID].Add(ahead + bound); c.At.After(due) {
			t.Errorf("%s called %s after enqueue + %s, want within %s", j.DeliveryID, c.At.Sub(due)+bound, ahead, bound)
		}
	}
}

// TestSnoozeLandsOnTime: a snoozed job runs again no sooner than its delay, and not a whole
// second of asynq's schedule later: the process that snoozed it moves it back on time.
func TestSnoozeLandsOnTime(t *testing.T) {
	t.Parallel()
	const snooze, bound = 300 * time.Millisecond, 150 * time.Millisecond
	u := redisURL(t)
	store := openStore(t)
	q := newQueue(t, u, store, nil, nil)
	snoozedAt := map[string]time.Time{}
	rec := queuetest.NewRecorder(func(_ context.Context, j hookd.Job, n int) error {
		if n == 1 {
			return hookd.Snooze(snooze, "endpoint busy")
		}
		return nil
	})
	start(t, q, rec.Handle)
	var jobs []hookd.Job
	for i := range 5 {
		jobs = append(jobs, hookd.Job{DeliveryID: fmt.Sprintf("dlv_%d", i), Attempt: 2, Trigger: hookd.TriggerScheduled})
	}
	enqueue(t, store, q, jobs...)
	calls := rec.Wait(t, 2*len(jobs), 5*time.Second)
	for _, c := range calls {
		if _, ok := snoozedAt[c.Job.DeliveryID]; !ok {
			snoozedAt[c.Job.DeliveryID] = c.At
			continue
		}
		gap := c.At.Sub(snoozedAt[c.Job.DeliveryID])
		t.Logf("%s ran again %s after it snoozed for %s", c.Job.DeliveryID, gap, snooze)
		if gap < snooze {
			t.Errorf("%s ran again %s after it snoozed for %s", c.Job.DeliveryID, gap, snooze)
		}
		if gap > snooze+bound {
			t.Errorf("%s ran again %s after it snoozed for %s, want within %s of the snooze", c.Job.DeliveryID, gap, snooze, bound)
		}
	}
}

// TestRestartAfterStop: Stop and Start again, twice, and jobs enqueued while stopped run after
// the next Start.
func TestRestartAfterStop(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	store := openStore(t)
	q := newQueue(t, u, store, nil, nil)
	rec := queuetest.NewRecorder(nil)
	for i := range 3 {
		j := hookd.Job{DeliveryID: fmt.Sprintf("dlv_%d", i), Attempt: 1, Trigger: hookd.TriggerScheduled}
		enqueue(t, store, q, j)
		start(t, q, rec.Handle)
		rec.Wait(t, i+1, 5*time.Second)
		if err := q.Stop(t.Context()); err != nil {
			t.Fatalf("Stop %d: %v", i+1, err)
		}
	}
	time.Sleep(settle)
	calls, _ := rec.Snapshot()
	for id, n := range perDelivery(calls) {
		if n != 1 {
			t.Errorf("%s handled %d times, want once", id, n)
		}
	}
	if len(calls) != 3 {
		t.Errorf("handler called %d times, want 3", len(calls))
	}
	if err := q.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := q.Start(t.Context(), rec.Handle); !errors.Is(err, redisqueue.ErrClosed) {
		t.Errorf("Start after Close returned %v, want ErrClosed", err)
	}
}

// TestWakeIsNotTheTaskThatParked: a job that wakes a parked delivery (Job.Wake) is enqueued while
// the task that parked it, of the same attempt, is still running; it must run after it, not be
// refused as its duplicate (which left an ordered endpoint's next delivery to the sweeper). A
// plain job of that attempt enqueued meanwhile is still the running task's duplicate.
func TestWakeIsNotTheTaskThatParked(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	store := openStore(t)
	q := newQueue(t, u, store, nil, nil)
	job := hookd.Job{DeliveryID: "dlv_parked", Attempt: 1, Trigger: hookd.TriggerScheduled}
	running, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	start(t, q, func(ctx context.Context, j hookd.Job) error {
		if j.DeliveryID == job.DeliveryID && calls.Add(1) == 1 {
			close(running)
			<-release // the parking task, finishing
		}
		return nil
	})
	enqueue(t, store, q, job)
	<-running
	enqueue(t, store, q, job) // a duplicate of the running task: refused
	wake := job
	wake.Wake = true
	enqueue(t, store, q, wake)
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(settle)
	if n := calls.Load(); n != 2 {
		t.Errorf("the delivery's jobs ran %d times, want 2: the parking task, then the wake", n)
	}
}
