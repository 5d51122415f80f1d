package hookd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookd/hookd/internal/outage"
)

// An attempt carries its message's event type since schema migration 17, so that an endpoint's
// attempts of some event types are read from an index. The attempts recorded before it are
// given theirs in the background, a paced batch at a time, by a started Client, rather than by
// the migration: the attempts are the largest table, and one statement rewriting every row
// would hold the upgrade (and, on SQLite, every send) for minutes on a database of millions.
// Until they are typed the lists read their messages' types instead, which is slower.
const (
	attemptTypesBatch = 5000
	attemptTypesRetry = 10 * time.Second
)

// AttemptTyper is a Store whose attempts recorded before they carried an event type can be
// given it in batches (both of this module's stores).
type AttemptTyper interface {
	// TypeOldAttempts gives at most limit attempts with no event type their message's, and
	// returns how many it gave: fewer than limit when none is left.
	TypeOldAttempts(ctx context.Context, limit int) (int, error)
}

// TypeOldAttempts gives every attempt recorded before attempts carried an event type its
// message's, batch by batch until none is left, and returns how many it gave. A started Client
// does it once; on a store that is not an AttemptTyper it does nothing.
func (c *Client) TypeOldAttempts(ctx context.Context) (int, error) {
	at, ok := c.store.(AttemptTyper)
	if !ok {
		return 0, nil
	}
	pace := newRetentionPacer(c.store)
	pace.n, pace.min, pace.max = 500, 50, attemptTypesBatch
	n, err := pace.sweep(ctx, at.TypeOldAttempts)
	if err != nil {
		return n, fmt.Errorf("hookd: type old attempts: %w", err)
	}
	return n, nil
}

// startAttemptTyping runs TypeOldAttempts until it succeeds or ctx ends, trying again after
// attemptTypesRetry when it fails; the channel it returns closes when it has returned.
func (c *Client) startAttemptTyping(ctx context.Context) chan struct{} {
	done := make(chan struct{})
	if _, ok := c.store.(AttemptTyper); !ok {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		fails := outage.New(c.cfg.Logger, nil).Cause("typing old attempts")
		start := time.Now()
		for {
			n, err := c.TypeOldAttempts(ctx)
			if err == nil {
				fails.OK()
				if n > 0 {
					c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "hookd gave the attempts recorded before the upgrade their event type",
						slog.Int("attempts", n), slog.Duration("took", time.Since(start)))
				}
				return
			}
			if ctx.Err() != nil {
				return
			}
			fails.Fail(err)
			t := time.NewTimer(attemptTypesRetry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return done
}
