package jobqueue

import (
	"errors"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/outage"
)

// Health's bounds. See Engine.Health.
const (
	// FailureWindow is how recent a job's failure on the database must be to count: jobs fail
	// only when they run, so an idle queue is not held unhealthy by one long past.
	FailureWindow = 5 * time.Second
	// FetchStall is how long a Fetch may run before the lane counts as stuck.
	FetchStall = 5 * time.Second
	// BusyStall is how long, beyond the job timeout, every slot of a lane may stay busy with no
	// job ending before the lane counts as stuck: a job ends within the job timeout.
	BusyStall = 30 * time.Second
)

// ErrStopped is Health's answer when no run is on.
var ErrStopped = errors.New("not started, or stopped")

// Health reports whether the engine's workers make progress: nil, or an error naming the first
// thing that keeps them from it. Those are, in order: no run is on (ErrStopped); a lane's fetches
// fail (until a fetch succeeds 2 s after the last failure); outcomes cannot be written (likewise);
// jobs fail because the database is unavailable (within FailureWindow); a lane's Fetch has not
// returned for FetchStall; every slot of a lane has been busy, and no job of it ended, for the
// job timeout and 30 s. A long backlog on a busy engine is none of these: its jobs end, and its
// fetches return.
func (e *Engine[R]) Health() error {
	e.mu.Lock()
	running := e.running
	e.mu.Unlock()
	if !running {
		return &hookd.HealthError{Reason: "the workers are stopped", Err: fmt.Errorf("%s: %w", e.name, ErrStopped)}
	}
	if s, ok := e.fetchFails.State(); ok {
		return failing("fetching jobs fails", s)
	}
	if s, ok := e.settleFails.State(); ok {
		return failing("writing job outcomes fails", s)
	}
	if s, ok := e.jobFails.Recent(FailureWindow); ok {
		return failing("jobs fail: database unavailable", s)
	}
	now := time.Now()
	for _, ln := range e.lanes {
		if began := ln.fetching.Load(); began != 0 && now.Sub(time.Unix(0, began)) > e.fetchStall {
			reason := fmt.Sprintf("a fetch of lane %s has not returned for %s", ln.name, now.Sub(time.Unix(0, began)).Round(time.Second))
			return &hookd.HealthError{Reason: reason, Err: errors.New(e.name + ": " + reason)}
		}
		stall := e.timeout + e.busyStall
		if ln.workers > 0 && now.Sub(time.Unix(0, ln.hadFree.Load())) > stall && now.Sub(time.Unix(0, ln.ended.Load())) > stall {
			reason := fmt.Sprintf("every slot of lane %s has been busy, and no job of it ended, for more than %s", ln.name, stall.Round(time.Second))
			return &hookd.HealthError{Reason: reason, Err: errors.New(e.name + ": " + reason)}
		}
	}
	return nil
}

// failing is the error of a cause's outage: reason, and the cause's error, how long and how
// often.
func failing(reason string, s outage.State) error {
	return &hookd.HealthError{Reason: reason,
		Err: fmt.Errorf("%s: %s (failing for %s, %d failures)", s.Cause, s.Err, time.Since(s.Since).Round(time.Second), s.Failures)}
}
