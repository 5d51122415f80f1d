package hookd

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The retention cleaner deletes the messages older than Config.Retention a batch at a time, runs
// the next batch at once while batches come full, and otherwise waits retentionIdle; after a
// failure it tries again after retentionRetry. Batches are small so that each holds the store's
// write lock briefly and sends go on between them. A Client cleans once when it starts.
const (
	retentionBatch = 500
	retentionIdle  = time.Hour
	retentionRetry = 10 * time.Second
)

// MinRetention is the shortest Config.Retention. A message whose delivery is still pending is
// kept past it until the delivery ends.
const MinRetention = 24 * time.Hour

// MessageRetainer is a Store that deletes old messages in batches (both of this module's stores
// are). A Client started with Config.Retention cleans them periodically (retention.go).
type MessageRetainer interface {
	// DeleteOldMessages deletes at most limit messages created before before, none of whose
	// deliveries is pending, with their deliveries, attempts, jobs, channel and tag rows, and
	// returns how many messages, deliveries and attempts it deleted. A store shared by several
	// processes lets one of them delete at a time and returns zero counts to the others.
	DeleteOldMessages(ctx context.Context, before time.Time, limit int) (RetentionCount, error)
}

// RetentionCount is how many rows of each kind the retention cleaner deleted.
type RetentionCount struct {
	Messages   int
	Deliveries int
	Attempts   int
}

func (r *RetentionCount) add(o RetentionCount) {
	r.Messages += o.Messages
	r.Deliveries += o.Deliveries
	r.Attempts += o.Attempts
}

// retentionTotal counts what a client's cleaner deleted since the client was made.
type retentionTotal struct {
	mu sync.Mutex
	n  RetentionCount
}

// RetentionDeleted returns how many rows this client's retention (the cleaner and
// DeleteOldMessages) deleted since it was made.
func (c *Client) RetentionDeleted() RetentionCount {
	c.retained.mu.Lock()
	defer c.retained.mu.Unlock()
	return c.retained.n
}

// DeleteOldMessages deletes the messages created more than Config.Retention ago whose
// deliveries are none pending, with their deliveries and attempts, batch by batch until none is
// left, and returns what it deleted. A message with a pending delivery is kept until the delivery
// ends, so that no retry loses its message. With no Retention, or on a store that is not a
// MessageRetainer, it does nothing.
func (c *Client) DeleteOldMessages(ctx context.Context) (RetentionCount, error) {
	var total RetentionCount
	mr, ok := c.store.(MessageRetainer)
	if !ok || c.cfg.Retention <= 0 {
		return total, nil
	}
	before := c.now().Add(-c.cfg.Retention)
	for {
		n, err := mr.DeleteOldMessages(BackgroundWrite(ctx), before, retentionBatch)
		total.add(n)
		c.retained.mu.Lock()
		c.retained.n.add(n)
		c.retained.mu.Unlock()
		if err != nil {
			return total, fmt.Errorf("hookd: delete old messages: %w", err)
		}
		if n.Messages < retentionBatch {
			return total, nil
		}
	}
}

// startRetention runs DeleteOldMessages until ctx ends, when Config.Retention is set; the channel
// it returns closes when the cleaner has returned.
func (c *Client) startRetention(ctx context.Context) chan struct{} {
	done := make(chan struct{})
	if c.cfg.Retention <= 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		c.runPeriodically(ctx, "retention", retentionIdle, retentionRetry, func(ctx context.Context) error {
			_, err := c.DeleteOldMessages(ctx)
			return err
		})
	}()
	return done
}
