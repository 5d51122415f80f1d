package hookd

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd/internal/outage"
)

// The payload sweep works as Svix's expired-message cleaner: it deletes expired payloads a batch
// at a time, runs the next batch while batches come full, and otherwise waits payloadSweepIdle;
// after a failure it tries again after payloadSweepRetry. A Client sweeps once when it starts.
// Its batches are paced as the retention cleaner's (newRetentionPacer), at most
// payloadSweepBatch payloads each.
const (
	payloadSweepBatch = 5000
	payloadSweepIdle  = 12 * time.Hour
	payloadSweepRetry = 10 * time.Second
)

// ExpirePayloads deletes the payloads whose retention (MessageIn.PayloadRetention) has passed,
// batch by batch until none is left, and returns how many it deleted. A started Client does it
// periodically; on a store that is not a PayloadExpirer it does nothing.
func (c *Client) ExpirePayloads(ctx context.Context) (int, error) {
	pe, ok := c.store.(PayloadExpirer)
	if !ok {
		return 0, nil
	}
	pace := newRetentionPacer(c.store)
	pace.n, pace.min, pace.max = 500, 50, payloadSweepBatch
	n, err := pace.sweep(ctx, func(ctx context.Context, limit int) (int, error) {
		return pe.ExpirePayloads(ctx, c.now(), limit)
	})
	if err != nil {
		return n, fmt.Errorf("hookd: expire payloads: %w", err)
	}
	return n, nil
}

// sweepPayloads runs ExpirePayloads until ctx ends.
func (c *Client) sweepPayloads(ctx context.Context) {
	c.runPeriodically(ctx, "payload sweep", payloadSweepIdle, payloadSweepRetry, func(ctx context.Context) error {
		_, err := c.ExpirePayloads(ctx)
		return err
	})
}

// runPeriodically runs pass at once and then every idle until ctx ends; after a failure it runs
// it again after retry. Its failures are logged as an outage whose cause is what (package
// outage): once, with summaries, not once per try. The background cleaners (payloads,
// retention) share it.
func (c *Client) runPeriodically(ctx context.Context, what string, idle, retry time.Duration, pass func(context.Context) error) {
	fails := outage.New(c.cfg.Logger, nil).Cause(what)
	for {
		wait := idle
		if err := pass(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			fails.Fail(err)
			wait = retry
		} else {
			fails.OK()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
