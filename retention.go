package hookd

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The retention cleaner deletes the messages older than Config.Retention a batch at a time, until
// none is left, and then waits retentionIdle; after a failure it tries again after retentionRetry.
// A Client cleans once when it starts. Its batches are paced (sweepPacer) so that a sweep of
// millions of messages, a first Retention on an old database, never stalls sends and deliveries.
const (
	retentionIdle  = time.Hour
	retentionRetry = 10 * time.Second
	// retentionMaxBatch bounds a batch of the cleaner (a message has a few deliveries and
	// attempts each).
	retentionMaxBatch = 2000
)

// newRetentionPacer paces the retention cleaner's batches on s. On a store in this process
// (SQLite), where a batch holds the one write connection, the store bounds each batch itself: it
// deletes a few messages at a time, and commits once 5 ms passed or as soon as a send or a record
// waits (sqlite.Store.DeleteOldMessages); after a batch the cleaner rests half as long as the
// batch took, up to 2.5 ms, so that it takes at most two thirds of the writer. On a server's
// (PostgreSQL), where sends go on beside a batch but share the server's CPU and disk, a batch is
// sized to take about 50 ms, at least 100 messages (a batch has a fixed cost: its round trips,
// the small job table read whole, its commit), and the cleaner rests as long after it, so that it takes at most half of a server core and short
// transactions let vacuum reclaim what the batches before deleted.
func newRetentionPacer(s Store) *sweepPacer {
	if isInProcess(s) {
		return &sweepPacer{target: 5 * time.Millisecond, rest: 0.5, n: retentionMaxBatch, min: retentionMaxBatch, max: retentionMaxBatch}
	}
	return &sweepPacer{target: 50 * time.Millisecond, rest: 1, n: 100, min: 100, max: retentionMaxBatch}
}

// MinRetention is the shortest Config.Retention. A message whose delivery is still pending is
// kept past it until the delivery ends.
const MinRetention = 24 * time.Hour

// MessageRetainer is a Store that deletes old messages in batches (both of this module's stores
// are). A Client started with Config.Retention cleans them periodically (retention.go).
type MessageRetainer interface {
	// DeleteOldMessages deletes at most limit messages created before before, none of whose
	// deliveries is pending, with their deliveries, attempts, jobs, channel and tag rows, and
	// returns how many messages, deliveries and attempts it deleted. It may delete fewer than
	// limit with more left (SQLite ends a batch early for a waiting writer): none deleted says
	// that none is left. A store shared by several processes lets one of them delete at a time
	// and returns zero counts to the others.
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
	pace := newRetentionPacer(c.store)
	for {
		start := time.Now()
		n, err := mr.DeleteOldMessages(BackgroundWrite(ctx), before, pace.batch())
		total.add(n)
		c.retained.mu.Lock()
		c.retained.n.add(n)
		c.retained.mu.Unlock()
		if err != nil {
			return total, fmt.Errorf("hookd: delete old messages: %w", err)
		}
		// A store may end a batch early to let other writers go (SQLite): only an empty batch
		// says that none is left.
		if n.Messages == 0 {
			return total, nil
		}
		if err := pace.done(ctx, n.Messages, time.Since(start)); err != nil {
			return total, fmt.Errorf("hookd: delete old messages: %w", err)
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

// sweepPacer sizes and spaces the batches of a background sweep (retention, payload expiry):
// each batch sized to take about target at the cost per row measured on the batches before,
// within min and max, and a rest of rest times its duration after it, at most rest times
// target. A batch's duration may include a wait for the write connection (SQLite), which the
// bound on the rest keeps from lengthening the rest, and min from shrinking the batches to none.
type sweepPacer struct {
	target      time.Duration
	rest        float64
	n, min, max int // the next batch's size, and its bounds
}

// batch returns the size of the next batch.
func (p *sweepPacer) batch() int { return p.n }

// sweep runs batch, which handles at most limit rows and returns how many it handled, batch after
// batch, each a background write (BackgroundWrite), sized and rested by p, until one comes back
// short of its limit; it returns the rows handled.
func (p *sweepPacer) sweep(ctx context.Context, batch func(ctx context.Context, limit int) (int, error)) (int, error) {
	total := 0
	for {
		start := time.Now()
		limit := p.batch()
		n, err := batch(BackgroundWrite(ctx), limit)
		total += n
		if err != nil || n < limit {
			return total, err
		}
		if err := p.done(ctx, n, time.Since(start)); err != nil {
			return total, err
		}
	}
}

// done records that a batch deleted rows in took, sizes the next one, and rests; it returns
// ctx's error when ctx ends during the rest. The next batch grows at most twofold, since the
// first batches, on a cold cache, are the dearest per row and a batch many times as large as
// the last one measured could hold the writer far longer than target.
func (p *sweepPacer) done(ctx context.Context, rows int, took time.Duration) error {
	if rows > 0 && took > 0 {
		next := int(int64(rows) * int64(p.target) / int64(took))
		p.n = max(p.min, min(next, 2*p.n, p.max))
	}
	t := time.NewTimer(time.Duration(float64(min(took, p.target)) * p.rest))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
