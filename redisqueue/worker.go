package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/drain"
)

// run is one Start of a Queue, until Stop: its asynq servers, the handlers' context and the
// sweeper. asynq servers cannot start again once shut down, so each Start makes new ones.
type run struct {
	q       *Queue
	h       hookd.JobHandler
	servers []*asynq.Server

	// ctx is the base of every handler's context; cancel is a hard stop.
	ctx    context.Context
	cancel context.CancelFunc
	// stopping is closed when Stop begins: a job fetched from then on, or held until its
	// NotBefore, goes back to its queue without reaching the handler.
	stopping chan struct{}
	// jobs counts handler calls in flight.
	jobs sync.WaitGroup

	sweepCancel context.CancelFunc
	sweepDone   chan struct{}

	mu     sync.Mutex
	wakers map[*time.Timer]struct{} // snoozed tasks to move to their queue on time
	ended  bool                     // Stop began: no new wakers
}

func newRun(q *Queue, ctx context.Context, h hookd.JobHandler) *run {
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &run{
		q: q, h: h, ctx: jobCtx, cancel: cancel,
		stopping: make(chan struct{}),
		wakers:   make(map[*time.Timer]struct{}),
	}
}

// errStopping is a job's result when the queue began to stop before the handler was called.
var errStopping = errors.New("redisqueue: queue stopping; job given back")

// earlyError is a job's result when asynq handed it over more than the longest hold before its
// NotBefore: the task goes back to the schedule until at.
type earlyError struct{ at time.Time }

func (e *earlyError) Error() string {
	return "redisqueue: job handed over early; scheduled again for " + e.at.Format(time.RFC3339Nano)
}

// process is the asynq handler of every lane: it holds a job until its NotBefore, calls the
// handler with the job timeout, and maps the result to asynq's (see retryDelay and isFailure).
func (r *run) process(ctx context.Context, t *asynq.Task) error {
	job, err := decodeJob(t.Payload())
	if err != nil {
		id, _ := asynq.GetTaskID(ctx)
		r.q.logger.LogAttrs(ctx, slog.LevelError, "hookd task cannot be decoded; archived", slog.String("task_id", id), slog.String("error", err.Error()))
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	if wait := time.Until(job.NotBefore); wait > 0 {
		if wait > r.q.tm.maxHold {
			return &earlyError{at: job.NotBefore.Add(-r.q.tm.lead)}
		}
		hold := time.NewTimer(wait)
		select {
		case <-hold.C:
		case <-ctx.Done():
			hold.Stop()
			return ctx.Err()
		case <-r.stopping:
			hold.Stop()
			return errStopping
		}
	}
	select {
	case <-r.stopping:
		return errStopping
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	err = r.call(ctx, job)
	if err == nil {
		return nil
	}
	if d, ok := hookd.AsSnooze(err); ok {
		if d <= wakeMax {
			r.wakeAt(ctx, max(d, time.Millisecond))
		}
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancelled by Stop: make sure asynq sees the cancellation, whatever the handler wrapped,
		// so the job goes back to its queue without a failure counted.
		if errors.Is(ctxErr, context.Canceled) && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return err
	}
	failures, _ := asynq.GetRetryCount(ctx)
	r.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd job failed; retrying",
		slog.String("delivery_id", job.DeliveryID),
		slog.Int("attempt", job.Attempt),
		slog.Int("failures", failures+1),
		slog.Duration("retry_in", hookd.FailedJobDelay(failures+1)),
		slog.String("error", err.Error()),
	)
	return err
}

// call calls the handler with the job timeout, counted in jobs (also when it panics: asynq
// recovers the panic and retries the job as a failure).
func (r *run) call(ctx context.Context, job hookd.Job) error {
	r.jobs.Add(1)
	defer r.jobs.Done()
	hctx, cancel := context.WithTimeout(ctx, r.q.tm.jobTimeout)
	defer cancel()
	return r.h(hctx, job)
}

// retryDelay is asynq's RetryDelayFunc: when to run again a task whose handler returned e after
// n failures. asynq forwards a task once the Unix second of the time it is given has begun, so
// every delay that must not end early reaches a whole second (see retryDelayUntil).
func (q *Queue) retryDelay(n int, e error, _ *asynq.Task) time.Duration {
	now := time.Now()
	var early *earlyError
	if errors.As(e, &early) {
		// Forwarded up to a second before at, then held until NotBefore.
		return max(early.at.Sub(now), 0)
	}
	if d, ok := hookd.AsSnooze(e); ok {
		return retryDelayUntil(now, now.Add(max(d, time.Millisecond)))
	}
	if !isFailure(e) {
		return 0
	}
	return retryDelayUntil(now, now.Add(hookd.FailedJobDelay(n+1)))
}

// isFailure is asynq's IsFailure: a snooze, a job handed over early, a job given back or
// cancelled by Stop, and a task whose process died (its lease expired) are not failures, so they
// count no retry and run again as the same job.
func isFailure(e error) bool {
	var early *earlyError
	if _, ok := hookd.AsSnooze(e); ok || errors.As(e, &early) {
		return false
	}
	return !errors.Is(e, errStopping) && !errors.Is(e, context.Canceled) && !errors.Is(e, asynq.ErrLeaseExpired)
}

// wakeAt moves the snoozed task of ctx from asynq's retry set to its queue after d, at the exact
// end of the snooze rather than the whole second after it (retryDelay). The task is written to
// the retry set after the handler returns; if it is not there yet, the move is tried again a few
// times, then left to asynq's own schedule.
func (r *run) wakeAt(ctx context.Context, d time.Duration) {
	qname, ok1 := asynq.GetQueueName(ctx)
	id, ok2 := asynq.GetTaskID(ctx)
	if !ok1 || !ok2 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		r.mu.Lock()
		delete(r.wakers, t)
		ended := r.ended
		r.mu.Unlock()
		if ended {
			return
		}
		for range wakeTries {
			err := r.q.inspector.RunTask(qname, id)
			if err == nil || errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound) {
				return
			}
			time.Sleep(wakeRetry)
		}
	})
	r.wakers[t] = struct{}{}
}

const (
	// wakeMax is the longest snooze whose end is kept by a timer in the process (wakeAt); a
	// longer one ends with asynq's schedule, in the whole second after its end.
	wakeMax = 10 * time.Second
	// wakeTries and wakeRetry are how often, and how far apart, wakeAt tries to move a snoozed
	// task that is not in the retry set yet (still active: asynq writes the retry after the
	// handler returns).
	wakeTries = 4
	wakeRetry = 5 * time.Millisecond
)

// startSweeper runs the sweeper at once and then every SweepInterval, until stop.
func (r *run) startSweeper() {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.ctx))
	r.sweepCancel, r.sweepDone = cancel, make(chan struct{})
	go func() {
		defer close(r.sweepDone)
		for {
			n, err := r.q.Sweep(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				r.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd sweep failed", slog.Int("enqueued", n), slog.String("error", err.Error()))
			case n > 0:
				r.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd sweep enqueued pending deliveries that had no job",
					slog.Int("enqueued", n), slog.Duration("sweep_after", r.q.cfg.SweepAfter))
			}
			t := time.NewTimer(r.q.cfg.SweepInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}

// stop stops the run; see Queue.Stop.
func (r *run) stop(ctx context.Context) error {
	close(r.stopping)
	r.mu.Lock()
	r.ended = true
	for t := range r.wakers {
		t.Stop()
	}
	clear(r.wakers)
	r.mu.Unlock()
	r.sweepCancel()
	<-r.sweepDone

	down := make(chan struct{})
	go func() {
		r.shutdownServers()
		r.jobs.Wait()
		close(down)
	}()
	err := drain.Wait(ctx, "redisqueue", down, r.cancel)
	r.cancel()
	return err
}

// shutdownServers stops every server from fetching, then shuts them down, waiting for their
// workers: all lanes at once.
func (r *run) shutdownServers() {
	var wg sync.WaitGroup
	for _, srv := range r.servers {
		wg.Go(func() {
			srv.Stop()
			srv.Shutdown()
		})
	}
	wg.Wait()
}
