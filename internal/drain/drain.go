// Package drain is how hookd's queues end their jobs at Stop: wait for the jobs in flight until the
// caller's context ends, then cancel them and wait a bounded time more.
package drain

import (
	"context"
	"fmt"
	"time"
)

// HardStop is how long Wait waits once ctx has ended and the jobs have been cancelled: a handler
// that ignores its cancelled context cannot hold Stop for longer.
const HardStop = 5 * time.Second

// Wait waits until done is closed. When ctx ends first, it calls cancel (which cancels the jobs'
// contexts) and waits at most HardStop more. It returns nil when the jobs ended before ctx did, else
// an error that starts with name and wraps ctx's error.
func Wait(ctx context.Context, name string, done <-chan struct{}, cancel func()) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	cancel()
	select {
	case <-done:
		return fmt.Errorf("%s: stop: jobs in flight cancelled: %w", name, ctx.Err())
	case <-time.After(HardStop):
		return fmt.Errorf("%s: stop: jobs cancelled but still running after %s: %w", name, HardStop, ctx.Err())
	}
}
