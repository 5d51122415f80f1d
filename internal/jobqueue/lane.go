package jobqueue

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// lane is one lane's settings, its wake-up, and the times Health reads. Its slots belong to a
// run (slots).
type lane struct {
	name    hookd.Lane
	workers int
	poll    time.Duration
	wake    signal // fetch now rather than at the next poll

	fetching atomic.Int64 // when the Fetch in flight began (Unix ns); 0: none is
	hadFree  atomic.Int64 // when a fetch last found a free slot (Unix ns)
	ended    atomic.Int64 // when a job last ended (Unix ns)
}

// fetchLoop fetches jobs into ln's free slots until stop is closed: at once, then whenever ln is
// woken, and at the latest every poll; after a fetch that filled every free slot, again after
// FetchCooldown. Between two fetches it pauses FetchCooldown, which bounds the fetch rate when
// wakes come back to back and lets the jobs that come due meanwhile share the next fetch.
func (e *Engine[R]) fetchLoop(ctx context.Context, stop <-chan struct{}, run *slots, ln *lane, h hookd.JobHandler) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-ln.wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		full := e.fetch(ctx, run, ln, h)
		next := ln.poll
		if full {
			next = FetchCooldown
		}
		t.Reset(next)
		select {
		case <-stop:
			return
		case <-time.After(FetchCooldown):
		}
	}
}

// fetch takes ln's free slots, fetches as many jobs due within the lane's horizon, gives back the
// slots it did not fill, and starts each job fetched. It reports whether the fetch filled every
// slot it asked for, so more may be due.
func (e *Engine[R]) fetch(ctx context.Context, run *slots, ln *lane, h hookd.JobHandler) (full bool) {
	i := LaneIndex(ln.name)
	run.mu.Lock()
	free := ln.workers - run.busy[i]
	if free > 0 {
		ln.hadFree.Store(time.Now().UnixNano())
	}
	if e.maxFetch > 0 {
		free = min(free, e.maxFetch)
	}
	run.busy[i] += max(free, 0)
	run.mu.Unlock()
	if free <= 0 {
		return false
	}
	ln.fetching.Store(time.Now().UnixNano())
	jobs, err := e.driver.Fetch(ctx, ln.name, free, time.Now().Add(2*ln.poll))
	ln.fetching.Store(0)
	switch {
	case err == nil:
		e.fetchFails.OK()
	case ctx.Err() == nil:
		e.fetchFails.Fail(err, slog.String("lane", string(ln.name)))
	}
	jobs = jobs[:min(len(jobs), free)]
	run.mu.Lock()
	run.busy[i] -= free - len(jobs)
	run.mu.Unlock()
	for _, j := range jobs {
		e.jobs.Add(1)
		e.spawn(func() {
			defer e.jobs.Done()
			e.run(ctx, run, ln, j, h)
		})
	}
	return len(jobs) == free
}

// run holds j until it is due, works it with h, frees its slot and hands the outcome to the
// finisher.
func (e *Engine[R]) run(ctx context.Context, run *slots, ln *lane, j Job[R], h hookd.JobHandler) {
	out := e.work(ctx, j, h)
	out.Lane, out.Ref = ln.name, j.Ref
	run.mu.Lock()
	run.busy[LaneIndex(ln.name)]--
	run.mu.Unlock()
	ln.ended.Store(time.Now().UnixNano())
	ln.wake.raise()
	e.fin.add(out)
}

// work holds j until it is due and works it with h, within the job timeout.
func (e *Engine[R]) work(ctx context.Context, j Job[R], h hookd.JobHandler) Outcome[R] {
	if wait := time.Until(j.RunAt); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Outcome[R]{Result: Released, RunAt: j.RunAt, Failures: j.Failures}
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		return Outcome[R]{Result: Released, RunAt: time.Now(), Failures: j.Failures}
	}
	hctx, cancel := context.WithTimeout(ctx, e.timeout)
	err := h(hctx, j.Job)
	cancel()
	v := judge(err, ctx.Err() != nil, j.Failures)
	switch {
	case v.dropped:
		e.logger.LogAttrs(ctx, slog.LevelError, "hookd job failed too often; dropped",
			slog.String("delivery_id", j.DeliveryID), slog.Int("attempt", j.Attempt),
			slog.Int("failures", v.failures), slog.String("error", err.Error()))
	case v.failures > j.Failures && errors.Is(err, hookd.ErrUnavailable):
		// Every job fails alike while the database is away: one outage, not a line a job.
		e.jobFails.Fail(err, slog.String("delivery_id", j.DeliveryID), slog.Int("attempt", j.Attempt))
	case v.failures > j.Failures:
		e.logger.LogAttrs(ctx, slog.LevelWarn, "hookd job failed; retrying",
			slog.String("delivery_id", j.DeliveryID), slog.Int("attempt", j.Attempt),
			slog.Int("failures", v.failures), slog.Duration("retry_in", v.delay), slog.String("error", err.Error()))
	}
	if v.failures == j.Failures {
		e.jobFails.OK()
	}
	out := Outcome[R]{Result: v.result, Failures: v.failures}
	if v.result != Done {
		out.RunAt = time.Now().Add(v.delay)
	}
	if v.failures > j.Failures && !v.dropped {
		out.LastError = sqlcodec.Text(err.Error(), maxLastError)
	}
	return out
}

// verdict is the snooze and failure policy's ruling on one run of a job.
type verdict struct {
	result   Result
	delay    time.Duration // until the job is due again, for Again and Released
	failures int           // the job's failures after this run
	dropped  bool          // Done because the job failed MaxFailures times
}

// judge is the snooze and failure policy: what becomes of a job that had failed failures times
// and whose handler returned err; stopped says that Stop cancelled the run.
func judge(err error, stopped bool, failures int) verdict {
	if err == nil {
		return verdict{result: Done, failures: failures}
	}
	if d, ok := hookd.AsSnooze(err); ok {
		return verdict{result: Again, delay: max(d, time.Millisecond), failures: failures}
	}
	if stopped {
		return verdict{result: Released, failures: failures}
	}
	n := failures + 1
	if n >= MaxFailures {
		return verdict{result: Done, failures: n, dropped: true}
	}
	return verdict{result: Again, delay: hookd.FailedJobDelay(n), failures: n}
}
