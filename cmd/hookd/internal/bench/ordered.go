package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// This file holds B4: one ordered endpoint (hookd.Endpoint.Ordered), whose messages go one at a
// time in message order, so its throughput is one round trip after another.

// b4Result is B4: messages to one ordered endpoint.
type b4Result struct {
	Messages int `json:"messages"`
	// Seconds runs from the first send to the last verified arrival.
	Seconds          float64 `json:"seconds"`
	DeliveriesPerSec float64 `json:"deliveriesPerSec"`
	// P50Ms and P99Ms run from a message's send to its verified arrival: it waits behind every
	// earlier message.
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	// OutOfOrder counts messages that arrived before one sent earlier; 0 for an ordered endpoint.
	OutOfOrder int         `json:"outOfOrder"`
	Receiver   benchCounts `json:"receiver"`
}

// runB4 sends o.B4Messages in a row from one producer (so that message order is the send order)
// to one ordered endpoint, and times their arrivals.
func runB4(ctx context.Context, t benchTarget, o *Options) (_ *b4Result, err error) {
	inst, err := t.open(ctx, "b4", 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, inst.close()) }()
	recv, err := openReceiver(ctx, t, o)
	if err != nil {
		return nil, err
	}
	defer recv.close()
	const path = "/b4/ordered"
	secret, err := inst.addOrderedEndpoint(ctx, recv.url(path))
	if err != nil {
		return nil, fmt.Errorf("create ordered endpoint: %w", err)
	}
	if err := recv.expect(path, secret, false); err != nil {
		return nil, err
	}
	n := o.B4Messages
	bar := startProgress(o.Progress, t.name()+" B4 ordered", n, recv.deliveredCount)
	ids, starts := make([]string, n), make([]time.Time, n)
	for i := range n {
		starts[i] = time.Now()
		if ids[i], err = inst.send(ctx, benchPayload("B4", i)); err != nil {
			bar.finish()
			return nil, fmt.Errorf("send message %d: %w", i, err)
		}
	}
	err = waitFor(ctx, "verified ordered deliveries", o.Stall, 5*time.Millisecond, recv.reached(n))
	bar.finish()
	if err != nil {
		return nil, err
	}
	counts, err := recv.counts(n)
	if err != nil {
		return nil, err
	}
	res := &b4Result{Messages: n, Receiver: counts}
	lats := make([]time.Duration, n)
	var prev time.Time
	for i, id := range ids {
		at, err := recv.waitArrival(ctx, id, path, o.Stall)
		if err != nil {
			return nil, err
		}
		lats[i] = at.Sub(starts[i])
		if at.Before(prev) {
			res.OutOfOrder++
		}
		prev = at
	}
	last, err := recv.lastArrival()
	if err != nil {
		return nil, err
	}
	res.Seconds = last.Sub(starts[0]).Seconds()
	res.DeliveriesPerSec = float64(n) / res.Seconds
	res.P50Ms, res.P99Ms = millis(percentile(lats, 50)), millis(percentile(lats, 99))
	return res, nil
}

// problems lists what went wrong in B4 of the target named name.
func (x *b4Result) problems(name string) []string {
	if x.OutOfOrder > 0 {
		return []string{fmt.Sprintf("%s B4: %d messages arrived before one sent earlier", name, x.OutOfOrder)}
	}
	return nil
}

// textB4 adds B4's table to a report's text, with row, header and flush as Report.Text makes them.
func textB4(b io.Writer, x *b4Result, header, flush func(), row func(string, func(*benchTargetReport) string, string)) {
	fmt.Fprintf(b, "\nB4  %s messages in a row to one ordered endpoint (one at a time, in order)\n", thousands(x.Messages))
	header()
	row("deliveries/s, first send to last verified delivery", func(t *benchTargetReport) string {
		return thousands(int(t.B4.DeliveriesPerSec + 0.5))
	}, "")
	row("send to verified arrival p50 / p99", func(t *benchTargetReport) string {
		return fmt.Sprintf("%s / %s ms", ms(t.B4.P50Ms), ms(t.B4.P99Ms))
	}, "")
	row("arrived before an earlier message", func(t *benchTargetReport) string {
		return fmt.Sprintf("%d %s", t.B4.OutOfOrder, mark(t.B4.OutOfOrder == 0))
	}, "0")
	countsRow(row, "", func(t *benchTargetReport) benchCounts { return t.B4.Receiver }, x.Receiver.Expected)
	flush()
	fmt.Fprintln(b, "  (a message waits behind every earlier one: its latency grows with the backlog, and the rate is one round trip at a time)")
}
