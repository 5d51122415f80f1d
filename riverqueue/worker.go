package riverqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
	"github.com/riverqueue/river"
)

// JobKind is the River job kind of every hookd job.
const JobKind = "hookd_attempt"

// River queue names, one per lane.
const (
	QueueFirst  = "hookd_first"
	QueueRetry  = "hookd_retry"
	QueueManual = "hookd_manual"
)

// lanes maps each hookd lane to its River queue.
var lanes = []struct {
	lane  hookd.Lane
	queue string
}{
	{hookd.LaneFirst, QueueFirst},
	{hookd.LaneRetry, QueueRetry},
	{hookd.LaneManual, QueueManual},
}

// QueueName returns the River queue that carries jobs of lane l.
func QueueName(l hookd.Lane) string {
	for _, x := range lanes {
		if x.lane == l {
			return x.queue
		}
	}
	return QueueFirst
}

const (
	// schedulerInterval is River's scheduler period, fixed in v0.51. A job inserted with a
	// ScheduledAt is made available only by the scheduler (late by up to this much), while a
	// snooze or a retry due within it goes straight to available and is fetched on time.
	schedulerInterval = 5 * time.Second

	// maxAttempts is River's attempt limit for a hookd job. An attempt is used only when the
	// handler fails to work the job (a database error), never by a snooze, and retries back off to
	// one a minute, so this is about a week of failing before River discards the job.
	maxAttempts = 10_000

	// completerLag is how late River writes a job's outcome (completed, snoozed, retried): its
	// batch completer writes every 250 ms unless 100 outcomes are waiting. A snoozed job can be
	// fetched again only after that write, so a snooze lands up to this much late.
	completerLag = 300 * time.Millisecond
)

// attemptArgs is the River job args of one hookd.Job. It is written with every job, so its JSON
// keys are short and empty fields are left out.
type attemptArgs struct {
	DeliveryID string `json:"d"`
	Attempt    int    `json:"a"`
	Trigger    string `json:"t,omitempty"`
	// NotBefore is in Unix microseconds; 0 means none.
	NotBefore int64 `json:"nb,omitempty"`
}

// Kind returns JobKind.
func (attemptArgs) Kind() string { return JobKind }

func argsOf(j hookd.Job) attemptArgs {
	a := attemptArgs{DeliveryID: j.DeliveryID, Attempt: j.Attempt, Trigger: string(j.Trigger)}
	if !j.NotBefore.IsZero() {
		a.NotBefore = j.NotBefore.UnixMicro()
	}
	return a
}

// job returns the hookd.Job that a was made from; NotBefore comes back in UTC, to the microsecond.
func (a attemptArgs) job() hookd.Job {
	j := hookd.Job{DeliveryID: a.DeliveryID, Attempt: a.Attempt, Trigger: hookd.AttemptTrigger(a.Trigger)}
	if a.NotBefore != 0 {
		j.NotBefore = time.UnixMicro(a.NotBefore).UTC()
	}
	return j
}

// insertOpts returns the River insert options of j, enqueued at now. A job due within the
// scheduler interval is inserted available (the worker holds or snoozes it until NotBefore); a
// job due later is scheduled one scheduler interval early, so that River's scheduler has made it
// available by NotBefore and the worker can again hold or snooze it for the rest.
func insertOpts(j hookd.Job, now time.Time) *river.InsertOpts {
	opts := &river.InsertOpts{Queue: QueueName(j.Lane()), MaxAttempts: maxAttempts}
	if j.NotBefore.Sub(now) > schedulerInterval {
		opts.ScheduledAt = j.NotBefore.Add(-schedulerInterval)
	}
	return opts
}

// earlyPlan says what a worker does with a job it picked up wait before the job's NotBefore: it
// sleeps when wait is at most hold, and otherwise snoozes until hold before NotBefore. hold is
// River's completer lag plus two poll intervals of the lane: the snooze is written, the job
// fetched again before NotBefore, and the last stretch slept, to the millisecond. A snooze
// longer than the scheduler interval would wait for River's scheduler, so a job due later than
// that snoozes until one scheduler interval before NotBefore, as insertOpts schedules it.
func earlyPlan(wait, hold time.Duration) (sleep, snooze time.Duration) {
	switch {
	case wait <= hold:
		return wait, 0
	case wait > schedulerInterval+hold:
		return 0, wait - schedulerInterval
	default:
		return 0, wait - hold
	}
}

// retryDelay is the wait before River tries again a job whose handler failed for the attempt-th
// time (River's count, from 1): hookd.FailedJobDelay.
func retryDelay(attempt int) time.Duration { return hookd.FailedJobDelay(attempt) }

// worker is River's worker for JobKind. It waits for NotBefore, then calls the handler that
// Start installed and maps its result to River's.
type worker struct {
	river.WorkerDefaults[attemptArgs]

	handler atomic.Pointer[hookd.JobHandler]
	logger  *slog.Logger
	// timeout bounds one call of the handler (QueueConfig.JobTimeout).
	timeout time.Duration
	// hold is, by River queue name, how long a worker sleeps rather than snoozes for a job picked
	// up before its NotBefore (see earlyPlan).
	hold map[string]time.Duration
}

// holdFor returns the hold of a lane whose poll interval is poll.
func holdFor(poll time.Duration) time.Duration { return completerLag + 2*poll }

var errNoHandler = errors.New("riverqueue: no handler: Start was not called")

// Work works one River job.
func (w *worker) Work(ctx context.Context, rj *river.Job[attemptArgs]) error {
	job := rj.Args.job()
	if wait := time.Until(job.NotBefore); wait > 0 {
		sleep, snooze := earlyPlan(wait, w.hold[rj.Queue])
		if snooze > 0 {
			return river.JobSnooze(snooze)
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	// A job fetched while the client stops gets a cancelled context: it goes back to available
	// without using an attempt, and the handler never sees it.
	if err := ctx.Err(); err != nil {
		return err
	}
	h := w.handler.Load()
	if h == nil {
		return errNoHandler
	}
	hctx, cancel := context.WithTimeout(ctx, w.timeout)
	err := (*h)(hctx, job)
	cancel()
	if err == nil {
		return nil
	}
	if d, ok := hookd.AsSnooze(err); ok {
		return river.JobSnooze(max(d, time.Millisecond))
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancelled by Stop: make sure River sees the cancellation, whatever the handler wrapped,
		// so the job goes back to available without using an attempt.
		if errors.Is(ctxErr, context.Canceled) && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return err
	}
	w.logger.LogAttrs(ctx, slog.LevelWarn, "hookd job failed; retrying",
		slog.String("delivery_id", job.DeliveryID),
		slog.Int("attempt", job.Attempt),
		slog.Int("queue_attempt", rj.Attempt),
		slog.Duration("retry_in", retryDelay(rj.Attempt)),
		slog.String("error", err.Error()),
	)
	return err
}

// Timeout is River's limit on one job: the handler's timeout plus the longest hold before it.
func (w *worker) Timeout(rj *river.Job[attemptArgs]) time.Duration {
	return w.timeout + w.hold[rj.Queue]
}

// NextRetry schedules the retry of a job whose handler failed (see retryDelay).
func (w *worker) NextRetry(rj *river.Job[attemptArgs]) time.Time {
	return time.Now().Add(retryDelay(rj.Attempt))
}
