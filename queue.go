package hookd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Job asks a worker for one attempt of one delivery. A queue carries jobs durably: a job inserted
// in a committed transaction is worked at least once, also across crashes.
type Job struct {
	DeliveryID string
	// Attempt is the number of the attempt this job makes (1 for the first). A job whose number
	// does not follow the delivery's attempts made is stale and is dropped, so a job that runs
	// twice makes one attempt.
	Attempt int
	Trigger AttemptTrigger
	// NotBefore is the earliest time to make the attempt; zero means now.
	NotBefore time.Time
	// Wake marks the job that queues a parked delivery again (an ordered endpoint's next
	// delivery, once the one before it ends, or every parked one, once the endpoint is no longer
	// ordered). The job that parked it makes the same attempt and may still be finishing, so a
	// queue that holds one job an attempt (the Redis queue's task ids) must take this one as
	// another.
	Wake bool
}

// Lane names the queue lane a job runs in: first attempts, retries and manual attempts each have
// workers of their own, so a backlog of retries never delays a first attempt.
type Lane string

const (
	LaneFirst  Lane = "first"
	LaneRetry  Lane = "retry"
	LaneManual Lane = "manual"
)

// Lane returns the lane the job runs in.
func (j Job) Lane() Lane {
	switch {
	case j.Trigger == TriggerManual:
		return LaneManual
	case j.Attempt <= 1:
		return LaneFirst
	default:
		return LaneRetry
	}
}

// JobHandler works one job. It returns nil when the job is done (whatever became of the delivery),
// a *SnoozeError to run the same job again later without counting an attempt, or another error
// when the job could not be worked (a database error): the queue tries it again soon.
type JobHandler func(ctx context.Context, job Job) error

// Queue carries delivery jobs from Send to the workers.
type Queue interface {
	// EnqueueTx inserts jobs inside tx, so they commit or roll back with the rows they carry.
	// A queue outside the store's database enqueues after commit instead (and needs a sweeper).
	EnqueueTx(ctx context.Context, tx Tx, jobs []Job) error
	// Start begins working jobs with h, with the concurrency of each lane set in QueueConfig.
	Start(ctx context.Context, h JobHandler) error
	// Stop stops fetching jobs and waits for jobs in flight until ctx ends; jobs still running
	// then are cancelled and run again later.
	Stop(ctx context.Context) error
}

// QueueConfig sizes a queue.
type QueueConfig struct {
	// Workers is the number of jobs worked at once in each lane. Default: 100 first, 50 retry,
	// 10 manual.
	Workers map[Lane]int
	// JobTimeout bounds one job. Default: 1 minute.
	JobTimeout time.Duration
}

// Queue sizing defaults and bounds: see QueueConfig.
const (
	DefaultJobTimeout = time.Minute
	// MaxLaneWorkers bounds QueueConfig.Workers of one lane.
	MaxLaneWorkers = 10_000
)

// DefaultLaneWorkers returns the default number of jobs worked at once in lane l.
func DefaultLaneWorkers(l Lane) int {
	switch l {
	case LaneRetry:
		return 50
	case LaneManual:
		return 10
	default:
		return 100
	}
}

// Resolve returns the workers of each lane and the job timeout c asks for, with the defaults
// filled in (a nil c means every default), or an error wrapping a *ValidationError that names
// the field of c at fault. Every Queue sizes itself with it.
func (c *QueueConfig) Resolve() (workers map[Lane]int, jobTimeout time.Duration, err error) {
	workers = map[Lane]int{LaneFirst: DefaultLaneWorkers(LaneFirst), LaneRetry: DefaultLaneWorkers(LaneRetry), LaneManual: DefaultLaneWorkers(LaneManual)}
	jobTimeout = DefaultJobTimeout
	if c == nil {
		return workers, jobTimeout, nil
	}
	for lane, n := range c.Workers {
		if _, ok := workers[lane]; !ok {
			return nil, 0, &ValidationError{Field: "QueueConfig.Workers", Reason: fmt.Sprintf("unknown lane %q; use hookd.LaneFirst, LaneRetry or LaneManual", lane)}
		}
		switch {
		case n < 0 || n > MaxLaneWorkers:
			return nil, 0, &ValidationError{Field: "QueueConfig.Workers", Reason: fmt.Sprintf("lane %q has %d workers; use 1 to %d, or 0 for the default", lane, n, MaxLaneWorkers)}
		case n > 0:
			workers[lane] = n
		}
	}
	switch {
	case c.JobTimeout < 0:
		return nil, 0, &ValidationError{Field: "QueueConfig.JobTimeout", Reason: fmt.Sprintf("is %s; use a positive duration, or zero for the default", c.JobTimeout)}
	case c.JobTimeout > 0:
		jobTimeout = c.JobTimeout
	}
	return workers, jobTimeout, nil
}

// FailedJobDelay is how long a queue waits before it runs again a job whose handler failed (a
// database error, not a snooze) for the n-th time: 1 s, 2 s, 4 s ... at most 1 min.
func FailedJobDelay(n int) time.Duration {
	const base, ceiling = time.Second, time.Minute
	if n < 1 {
		n = 1
	}
	if n > 7 { // 1 s << 6 = 64 s is already past the ceiling
		return ceiling
	}
	return min(base<<(n-1), ceiling)
}

// SnoozeError asks the queue to run a job again after Delay without counting an attempt.
type SnoozeError struct {
	Delay  time.Duration
	Reason string
}

func (e *SnoozeError) Error() string {
	return fmt.Sprintf("snooze %s: %s", e.Delay, e.Reason)
}

// Snooze returns a *SnoozeError.
func Snooze(d time.Duration, reason string) error {
	return &SnoozeError{Delay: d, Reason: reason}
}

// AsSnooze reports whether err asks for a snooze, and for how long.
func AsSnooze(err error) (time.Duration, bool) {
	var s *SnoozeError
	if errors.As(err, &s) {
		return s.Delay, true
	}
	return 0, false
}
