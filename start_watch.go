package hookd

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultUnstartedWarning is how long a delivery written by a client that was never started may
// wait, unworked, before the client logs a warning (startWatch).
const DefaultUnstartedWarning = time.Minute

// startWatch tells when a client that was never started writes deliveries that nobody works, a
// client.Start forgotten: a send on such a client (one without Config.EnqueueOnly) arms a timer
// with one of its deliveries; when the timer fires and the client is still not started, the
// delivery is read, and if it is still pending with no attempt made, one Warn line says to call
// Start (or to set EnqueueOnly). A delivery that another process worked disarms the watch until
// the next send, so a client whose jobs are worked elsewhere never warns. It warns once.
type startWatch struct {
	after   time.Duration // DefaultUnstartedWarning; shorter in tests
	started atomic.Bool   // Start has succeeded once
	running atomic.Bool   // Start has succeeded and Stop has not run since (Client.Started)
	armed   atomic.Bool   // a check is due, or the warning was given
	checks  atomic.Int64  // checks run, for tests

	mu       sync.Mutex
	timer    *time.Timer
	delivery string // the delivery the timer checks
}

// Started reports whether the client works delivery jobs: Start has succeeded and Stop has not
// run since. A client that only sends (Config.EnqueueOnly, hookd serve --role api) is never
// started; its deliveries wait for a started client, in this process or another.
func (c *Client) Started() bool { return c.watch.running.Load() }

// noteUnworked arms the watch with a delivery just written, on a client never started.
func (c *Client) noteUnworked(deliveryID string) {
	w := &c.watch
	if c.cfg.EnqueueOnly || w.started.Load() || !w.armed.CompareAndSwap(false, true) {
		return
	}
	after := w.after
	if after <= 0 {
		after = DefaultUnstartedWarning
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.delivery = deliveryID
	w.timer = time.AfterFunc(after, func() { c.checkUnworked(deliveryID, after) })
}

// checkUnworked warns when the delivery still waits unworked on a client never started;
// otherwise it disarms the watch for the next send.
func (c *Client) checkUnworked(deliveryID string, waited time.Duration) {
	w := &c.watch
	defer w.checks.Add(1)
	if w.started.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := c.store.GetDelivery(ctx, deliveryID)
	if err != nil || d.Status != DeliveryPending || d.Attempts > 0 {
		// Rolled back with its transaction, or the store closed; or worked by another process.
		w.armed.Store(false)
		return
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn,
		"hookd: deliveries are waiting and this client was never started: call Client.Start to work them, "+
			"or set Config.EnqueueOnly when another process does",
		slog.Duration("waited", waited), slog.String("delivery", deliveryID))
}

// stopWatch stops a check not yet run (the client is being stopped) and marks the client not
// running.
func (c *Client) stopWatch() {
	w := &c.watch
	w.running.Store(false)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil && w.timer.Stop() {
		w.armed.Store(false)
	}
}
