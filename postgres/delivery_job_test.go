package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/queuetest"
)

// withDeliveries is the store's queue with, in each transaction that enqueues a first scheduled
// attempt, the pending delivery row it is for inserted first (as Send inserts it), so that the
// delivery row is the job. It runs the queue suite on the deliveries' own first jobs.
type withDeliveries struct {
	hookd.Queue
	// inTx runs a transaction of the store (nil: a job's delivery is left as it is).
	inTx func(context.Context, func(hookd.Tx) error) error
}

// Start starts the queue with h, after which a first scheduled attempt whose handler returns nil
// ends its delivery (delivered), as hookd's worker ends it or moves it on before its job is done:
// a pending delivery left without a job is one the queue gives a job again when it starts.
func (q withDeliveries) Start(ctx context.Context, h hookd.JobHandler) error {
	if h == nil || q.inTx == nil {
		return q.Queue.Start(ctx, h)
	}
	return q.Queue.Start(ctx, func(ctx context.Context, j hookd.Job) error {
		if err := h(ctx, j); err != nil || j.Attempt != 1 || j.Trigger != hookd.TriggerScheduled {
			return err
		}
		return q.inTx(ctx, func(tx hookd.Tx) error {
			d, err := tx.GetDelivery(ctx, j.DeliveryID)
			if errors.Is(err, hookd.ErrNotFound) || (err == nil && d.Status != hookd.DeliveryPending) {
				return nil
			}
			if err != nil {
				return err
			}
			return tx.SetDeliveryStatus(ctx, j.DeliveryID, hookd.DeliveryDelivered, nil, "", time.Now())
		})
	})
}

func (q withDeliveries) EnqueueTx(ctx context.Context, tx hookd.Tx, jobs []hookd.Job) error {
	var ids []string
	for _, j := range jobs {
		if j.Attempt == 1 && j.Trigger == hookd.TriggerScheduled {
			ids = append(ids, j.DeliveryID)
		}
	}
	if tx == nil { // the suite's unsupported transaction, for the queue to refuse
		return q.Queue.EnqueueTx(ctx, tx, jobs)
	}
	if raw, ok := tx.Raw().(pgx.Tx); ok && len(ids) > 0 {
		if err := insertDeliveryRows(ctx, raw, ids); err != nil {
			return err
		}
	}
	return q.Queue.EnqueueTx(ctx, tx, jobs)
}

// insertDeliveryRows inserts pending deliveries with ids (of one message and application of
// their own, made on the first call), leaving the columns of the delivery's own first job to
// their defaults, as InsertDeliveries does.
func insertDeliveryRows(ctx context.Context, tx pgx.Tx, ids []string) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_q', 'q', now(), now()) ON CONFLICT DO NOTHING;
		INSERT INTO hookd_messages (id, app_id, event_type, created_at) VALUES ('msg_q', 'app_q', 'q', now()) ON CONFLICT DO NOTHING`)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, next_attempt_at, created_at, updated_at)
		SELECT id, 'msg_q', id, 'app_q', 'pending', now(), now(), now() FROM unnest($1::text[]) AS v (id)
		ON CONFLICT DO NOTHING`, ids)
	return err
}

// TestQueueConformanceOwnFirstJobs runs the queue suite with every first scheduled attempt's
// delivery row in the database, so that those jobs are the delivery rows' own.
func TestQueueConformanceOwnFirstJobs(t *testing.T) {
	testURL(t)
	queuetest.Run(t, queuetest.Harness{
		New: func(t testing.TB, cfg *hookd.QueueConfig) (hookd.Queue, func(context.Context, func(hookd.Tx) error) error) {
			t.Helper()
			b := setup(t)
			q, err := b.store.NewQueue(cfg)
			if err != nil {
				t.Fatalf("NewQueue: %v", err)
			}
			t.Cleanup(func() {
				// The suite's first jobs were the deliveries' own: none went to hookd_jobs
				// but those a snooze, a failure or a NotBefore put there.
				var first int
				if err := b.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM hookd_jobs
					WHERE lane = 'first' AND failures = 0 AND not_before IS NULL AND trigger_kind = 'scheduled'
						AND delivery_id NOT IN (SELECT id FROM hookd_deliveries WHERE first_job = false AND job_claims > 0)`).Scan(&first); err != nil {
					t.Errorf("count first jobs: %v", err)
				} else if first != 0 {
					t.Errorf("%d first jobs in hookd_jobs that their deliveries should have been", first)
				}
			})
			return withDeliveries{Queue: q, inTx: b.store.InTx}, b.store.InTx
		},
		Timing: suiteTiming(),
	})
}

// ownJob reads a delivery's own-job columns.
func ownJob(t *testing.T, s *postgres.Store, id string) (first bool, claims int) {
	t.Helper()
	if err := s.Pool().QueryRow(context.Background(), `SELECT first_job, job_claims FROM hookd_deliveries WHERE id = $1`, id).Scan(&first, &claims); err != nil {
		t.Fatalf("delivery %s: %v", id, err)
	}
	return first, claims
}

func jobRows(t *testing.T, s *postgres.Store) int {
	t.Helper()
	var n int
	if err := s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM hookd_jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// enqueueFirst inserts pending deliveries and enqueues their first attempts in one transaction,
// as Send does.
func enqueueFirst(t *testing.T, s *postgres.Store, q hookd.Queue, ids ...string) {
	t.Helper()
	jobs := make([]hookd.Job, len(ids))
	for i, id := range ids {
		jobs[i] = hookd.Job{DeliveryID: id, Attempt: 1, Trigger: hookd.TriggerScheduled}
	}
	enqueue(t, s, withDeliveries{Queue: q}, jobs...)
}

// TestOwnFirstJobTakenOverAfterLease: a delivery's own first job whose process stops answering
// is claimed by another process once its lease runs out, from the delivery row (no job row
// exists at any time), and the first claim's late outcome changes nothing.
func TestOwnFirstJobTakenOverAfterLease(t *testing.T) {
	b := setup(t)
	s1, q1 := process(t, b, &hookd.QueueConfig{Workers: map[hookd.Lane]int{hookd.LaneFirst: 1}})
	_, q2 := process(t, b, nil)
	postgres.SetQueueTiming(q1, 500*time.Millisecond, 20*time.Millisecond)
	hung, release := make(chan hookd.Job, 1), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	err := q1.Start(context.Background(), func(ctx context.Context, j hookd.Job) error {
		select {
		case hung <- j:
		default:
		}
		<-release
		return nil // the late "done" of a claim that no longer holds
	})
	if err != nil {
		t.Fatal(err)
	}
	enqueued := time.Now()
	enqueueFirst(t, s1, q1, "dlv_own_lease")
	var first hookd.Job
	select {
	case first = <-hung:
	case <-time.After(5 * time.Second):
		t.Fatal("the first process did not claim the delivery")
	}
	want := hookd.Job{DeliveryID: "dlv_own_lease", Attempt: 1, Trigger: hookd.TriggerScheduled}
	if first != want {
		t.Fatalf("first claim handed over %+v, want %+v", first, want)
	}
	if n := jobRows(t, s1); n != 0 {
		t.Fatalf("%d rows in hookd_jobs, want none: the delivery row is the job", n)
	}
	c := newCalls()
	got := make(chan hookd.Job, 2)
	if err := q2.Start(context.Background(), c.handler("two", func(_ context.Context, j hookd.Job) error { got <- j; return nil })); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 1, 10*time.Second)
	if waited := time.Since(enqueued); waited < 450*time.Millisecond {
		t.Errorf("the second process got the delivery %s after it was enqueued, before the first claim's 500 ms lease ran out", waited)
	}
	if j := <-got; j != want {
		t.Errorf("second claim handed over %+v, want %+v", j, want)
	}
	close(release)
	time.Sleep(time.Second)
	c.mu.Lock()
	n := c.n["dlv_own_lease"]
	c.mu.Unlock()
	if n != 1 {
		t.Errorf("delivery worked %d times by the second process, want 1", n)
	}
	if own, claims := ownJob(t, s1, "dlv_own_lease"); own || claims != 2 {
		t.Errorf("after the second claim's done: first_job %v, %d claims; want false, 2", own, claims)
	}
	if n := jobRows(t, s1); n != 0 {
		t.Errorf("%d rows in hookd_jobs, want none", n)
	}
}

// TestOwnFirstJobOutcomes: a snoozed own first job moves to hookd_jobs and runs again from there
// as the same job; a recorded scheduled attempt ends the own job, a manual one does not; an
// enqueue of the first attempt again adds no job while the delivery is its own job; a first
// attempt with a NotBefore is a job row, and the delivery is no longer its own job.
func TestOwnFirstJobOutcomes(t *testing.T) {
	b := setup(t)
	s, q := process(t, b, nil)
	ctx := context.Background()
	enqueueFirst(t, s, q, "dlv_snooze", "dlv_record", "dlv_later")
	// The first attempt enqueued again, as a second Send path might: still no row.
	enqueue(t, s, q, hookd.Job{DeliveryID: "dlv_record", Attempt: 1, Trigger: hookd.TriggerScheduled})
	if n := jobRows(t, s); n != 0 {
		t.Fatalf("%d rows in hookd_jobs, want none", n)
	}
	later := time.Now().Add(time.Hour)
	enqueue(t, s, q, hookd.Job{DeliveryID: "dlv_later", Attempt: 1, Trigger: hookd.TriggerScheduled, NotBefore: later})
	if own, _ := ownJob(t, s, "dlv_later"); own || jobRows(t, s) != 1 {
		t.Fatalf("a first attempt with a NotBefore: first_job %v, %d job rows; want false, 1", own, jobRows(t, s))
	}

	// A manual attempt's record leaves the own job; a scheduled one ends it.
	now := time.Now()
	rec := func(trigger hookd.AttemptTrigger, status hookd.DeliveryStatus) hookd.AttemptRecord {
		return hookd.AttemptRecord{Status: status, Attempt: hookd.Attempt{
			ID: "atmpt_" + string(trigger), DeliveryID: "dlv_record", MessageID: "msg_q", EndpointID: "dlv_record", AppID: "app_q",
			Number: 1, Trigger: trigger, URL: "http://127.0.0.1:1/", At: now, StatusCode: 500,
		}}
	}
	if err := s.InTx(ctx, func(tx hookd.Tx) error {
		return tx.RecordAttempts(ctx, []hookd.AttemptRecord{rec(hookd.TriggerManual, hookd.DeliveryPending)})
	}); err != nil {
		t.Fatal(err)
	}
	if own, _ := ownJob(t, s, "dlv_record"); !own {
		t.Fatal("a manual attempt's record ended the delivery's own first job")
	}
	if err := s.InTx(ctx, func(tx hookd.Tx) error {
		return tx.RecordAttempts(ctx, []hookd.AttemptRecord{rec(hookd.TriggerScheduled, hookd.DeliveryDelivered)})
	}); err != nil {
		t.Fatal(err)
	}
	if own, _ := ownJob(t, s, "dlv_record"); own {
		t.Fatal("a scheduled attempt's record left the delivery its own first job")
	}

	// dlv_snooze: snoozed once, then done.
	calls := make(chan hookd.Job, 4)
	snoozed := false
	if err := q.Start(ctx, func(_ context.Context, j hookd.Job) error {
		if j.DeliveryID != "dlv_snooze" {
			return fmt.Errorf("unexpected job %+v", j)
		}
		calls <- j
		if !snoozed {
			snoozed = true
			return hookd.Snooze(200*time.Millisecond, "busy")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := hookd.Job{DeliveryID: "dlv_snooze", Attempt: 1, Trigger: hookd.TriggerScheduled}
	for i := range 2 {
		select {
		case j := <-calls:
			if j != want {
				t.Fatalf("call %d: %+v, want %+v", i, j, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d of the snoozed delivery did not come", i)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		rows, err := s.Pool().Query(ctx, `SELECT delivery_id FROM hookd_jobs ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if own, _ := ownJob(t, s, "dlv_snooze"); !own && slices.Equal(left, []string{"dlv_later"}) {
			break // the snoozed job moved to hookd_jobs and was deleted there when done
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs left %s, want only dlv_later's", strings.Join(left, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQueueDepthCountsOwnFirstJobs: the deliveries that are their own first job count as due
// first-lane jobs until claimed.
func TestQueueDepthCountsOwnFirstJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s, q := process(t, b, nil)
	enqueueFirst(t, s, q, "dlv_1", "dlv_2")
	enqueue(t, s, q, hookd.Job{DeliveryID: "dlv_3", Attempt: 2, NotBefore: time.Now().Add(time.Hour)})
	got, err := q.(hookd.QueueDepther).QueueDepth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b hookd.LaneDepth) int { return strings.Compare(string(a.Lane), string(b.Lane)) })
	want := []hookd.LaneDepth{{Lane: hookd.LaneFirst, Due: 2}, {Lane: hookd.LaneRetry, Scheduled: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("depth %+v, want %+v", got, want)
	}
}
