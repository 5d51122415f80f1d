package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// destinations counts a message's deliveries (one per endpoint it goes to) by how they stand.
type destinations struct {
	total     int
	delivered int // an attempt succeeded
	failed    int // failed for good, or cancelled
}

// open is how many deliveries are still pending: not tried yet, or failed with a retry scheduled.
func (d destinations) open() int { return d.total - d.delivered - d.failed }

// String says how the deliveries stand, for the table "hookd send --wait" prints.
func (d destinations) String() string {
	s := strconv.Itoa(d.delivered) + " of " + strconv.Itoa(d.total)
	if d.failed > 0 {
		s += fmt.Sprintf("; %d failed", d.failed)
	}
	if n := d.open(); n > 0 {
		s += fmt.Sprintf("; %d still pending", n)
	}
	return s
}

// readDestinations reads how the deliveries of the message stand: its attempted destinations,
// which the server writes with the message and updates with each attempt.
func (c *conn) readDestinations(ctx context.Context, app, msg string) (destinations, error) {
	var d destinations
	var iter *string
	for {
		limit := int32(maxPageSize)
		l, err := c.sdk.MessageAttempt.ListAttemptedDestinations(ctx, app, msg, &svix.MessageAttemptListOptions{Iterator: iter, Limit: &limit})
		if err != nil {
			return d, c.failAt(ctx, "read the deliveries of message "+msg, target{app: app, msg: msg}, err)
		}
		for _, ep := range l.Data {
			d.total++
			switch attemptStatus(ep.Status) {
			case "success":
				d.delivered++
			case "fail":
				d.failed++
			}
		}
		next := l.Iterator.Get()
		if l.Done || next == nil || *next == "" || len(l.Data) == 0 || (iter != nil && *next == *iter) {
			return d, nil
		}
		iter = next
	}
}

// waitDestinations reads the message's deliveries until none is pending or wait has passed,
// and returns how they stand then. A delivery being retried stays pending: the wait covers
// the retries that fall within it.
func (c *conn) waitDestinations(ctx context.Context, app, msg string, wait time.Duration) (destinations, error) {
	deadline := time.Now().Add(wait)
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 500*time.Millisecond) {
		d, err := c.readDestinations(ctx, app, msg)
		if err != nil || d.open() == 0 {
			return d, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return d, nil
		}
		timer := time.NewTimer(min(delay, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return d, nil
		case <-timer.C:
		}
	}
}
