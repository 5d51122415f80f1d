package redisqueue

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hookd/hookd"
)

// TaskType is the asynq task type of every hookd job.
const TaskType = "hookd:attempt"

// maxRetry is asynq's limit on a task's failures. A failure is a handler error other than a
// snooze (a database error), and failures back off to one a minute, so this is about a week of
// failing before asynq archives the task.
const maxRetry = 10_000

// lanes are hookd's lanes, each an asynq queue of its own with a server of its own.
var lanes = []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual}

// QueueName returns the asynq queue that carries the jobs of lane l in namespace ns.
func QueueName(ns string, l hookd.Lane) string { return ns + ":" + string(l) }

// TaskID returns the asynq task id of a job: "<DeliveryID>:<Attempt>:<Trigger>". asynq refuses a
// second task with the id of one it holds, so a job enqueued twice (after its commit and by the
// sweeper, or by two sweepers) is one task. A job that wakes a parked delivery (hookd.Job.Wake)
// gets an id of its own (taskOptions): the task that parked the delivery has this id and may
// still be finishing when the delivery before it ends, and a wake refused as its duplicate left
// the delivery for the sweeper, at least SweepInterval later.
func TaskID(j hookd.Job) string {
	return j.DeliveryID + ":" + strconv.Itoa(j.Attempt) + ":" + string(j.Trigger)
}

// payload is the task payload of one hookd.Job. Its JSON keys are short and empty fields are left
// out: it is written with every task.
type payload struct {
	DeliveryID string `json:"d"`
	Attempt    int    `json:"a"`
	Trigger    string `json:"t,omitempty"`
	// NotBefore is in Unix microseconds; 0 means none.
	NotBefore int64 `json:"nb,omitempty"`
}

func encodeJob(j hookd.Job) ([]byte, error) {
	p := payload{DeliveryID: j.DeliveryID, Attempt: j.Attempt, Trigger: string(j.Trigger)}
	if !j.NotBefore.IsZero() {
		p.NotBefore = j.NotBefore.UnixMicro()
	}
	return json.Marshal(p)
}

// decodeJob returns the job a payload was made from; NotBefore comes back in UTC, to the
// microsecond.
func decodeJob(b []byte) (hookd.Job, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return hookd.Job{}, fmt.Errorf("decode %s payload: %w", TaskType, err)
	}
	if p.DeliveryID == "" {
		return hookd.Job{}, fmt.Errorf("decode %s payload: no delivery id", TaskType)
	}
	j := hookd.Job{DeliveryID: p.DeliveryID, Attempt: p.Attempt, Trigger: hookd.AttemptTrigger(p.Trigger)}
	if p.NotBefore != 0 {
		j.NotBefore = time.UnixMicro(p.NotBefore).UTC()
	}
	return j, nil
}

// timing is what the queue's schedule depends on; see the package documentation, # Timing.
type timing struct {
	// lead is how far ahead of NotBefore a task is scheduled, so that asynq's forwarder and a
	// lane's poll have made it pending and fetched it by NotBefore.
	lead time.Duration
	// maxHold is the longest a worker holds a job that came early; a job that comes earlier still
	// goes back to the schedule.
	maxHold time.Duration
	// jobTimeout bounds the handler (QueueConfig.JobTimeout).
	jobTimeout time.Duration
	// taskTimeout is asynq's limit on one task: the longest hold and the handler's timeout, in
	// whole seconds (asynq keeps a task's timeout in seconds), with a second to spare.
	taskTimeout time.Duration
}

// scoreGrain is the grain of asynq's schedule: scheduled and retried tasks are kept in sorted sets
// scored by Unix seconds, and forwarded once the score is at or before the current second, so up
// to a second before the time they were given.
const scoreGrain = time.Second

func newTiming(cfg Config, jobTimeout time.Duration) timing {
	lead := cfg.ForwardInterval + 2*max(cfg.FirstPollInterval, cfg.PollInterval) + 10*time.Millisecond
	maxHold := scoreGrain + lead + 500*time.Millisecond
	return timing{
		lead:        lead,
		maxHold:     maxHold,
		jobTimeout:  jobTimeout,
		taskTimeout: ceilSecond(jobTimeout+maxHold) + time.Second,
	}
}

// ceilSecond rounds d up to a whole number of seconds.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// taskOptions returns the asynq options of job j in namespace ns, enqueued at now.
func (tm timing) taskOptions(ns string, j hookd.Job, now time.Time) []asynq.Option {
	opts := []asynq.Option{
		asynq.Queue(QueueName(ns, j.Lane())),
		asynq.TaskID(taskID(j, now)),
		asynq.MaxRetry(maxRetry),
		asynq.Timeout(tm.taskTimeout),
		asynq.Retention(0),
	}
	if at := j.NotBefore.Add(-tm.lead); !j.NotBefore.IsZero() && at.After(now) {
		opts = append(opts, asynq.ProcessAt(at))
	}
	return opts
}

// taskID is TaskID, and for a wake the time it was enqueued after it, which nothing else
// enqueues: "<DeliveryID>:<Attempt>:<Trigger>:wake:<Unix ns, base 36>".
func taskID(j hookd.Job, now time.Time) string {
	if j.Wake {
		return TaskID(j) + ":wake:" + strconv.FormatInt(now.UnixNano(), 36)
	}
	return TaskID(j)
}

// retryDelayUntil returns the delay for asynq's RetryDelayFunc, at now, for a task that must not be
// forwarded before at: the score asynq writes is the Unix second of now plus the delay, so the
// delay reaches the whole second at or after at.
func retryDelayUntil(now, at time.Time) time.Duration {
	s := at.Truncate(time.Second)
	if s.Before(at) {
		s = s.Add(time.Second)
	}
	return max(s.Sub(now), 0)
}
