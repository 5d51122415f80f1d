package hookd

import "context"

// LaneDepth is how many jobs one lane of a queue holds, for metrics.
type LaneDepth struct {
	Lane Lane
	// Due counts the jobs whose time has come: available to a worker now, or being worked where
	// the queue does not tell them apart.
	Due int64
	// Scheduled counts the jobs waiting for their time: a retry's delay, a snooze, a NotBefore.
	Scheduled int64
}

// QueueDepther is a Queue that can count its jobs per lane. It is optional: a metrics reader
// type-asserts the queue (Client.Queue) to it.
type QueueDepther interface {
	// QueueDepth returns one LaneDepth per lane that holds jobs, at a cost bounded by an index
	// scan or a few commands per lane.
	QueueDepth(ctx context.Context) ([]LaneDepth, error)
}

// Queue returns the queue the client's jobs go through: Config.Queue, or the store's own queue.
// It is there to reach the optional interfaces a queue has, such as QueueDepther.
func (c *Client) Queue() Queue { return c.queue }
