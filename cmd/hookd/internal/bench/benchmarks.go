package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
)

// This file holds the benchmarks, B1, B2 and B3, and how they send and wait.

// sendAll sends n messages through producers concurrent producers and returns the duration of
// every Send, in no particular order. The first error stops every producer.
func sendAll(ctx context.Context, inst benchInstance, bench string, n, producers int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	lats := make([][]time.Duration, producers)
	errs := make([]error, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				start := time.Now()
				if _, err := inst.send(ctx, benchPayload(bench, i)); err != nil {
					errs[p] = fmt.Errorf("send message %d: %w", i, err)
					cancel()
					return
				}
				lats[p] = append(lats[p], time.Since(start))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(lats...), nil
}

// waitFor polls probe every interval until it says done. It fails when ctx ends or when the
// progress probe reports stays the same for stall.
func waitFor(ctx context.Context, what string, stall, interval time.Duration, probe func() (progress int, done bool, err error)) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last, lastAt := 0, time.Now()
	for first := true; ; first = false {
		p, done, err := probe()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", what, err)
		case done:
			return nil
		case first || p != last:
			last, lastAt = p, time.Now()
		case time.Since(lastAt) > stall:
			return fmt.Errorf("%s: no progress for %s (at %d)", what, stall, p)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// runB1 measures fan-out throughput: messages × endpoints deliveries from concurrent producers.
func runB1(ctx context.Context, t benchTarget, o *Options) (_ *b1Result, err error) {
	inst, err := t.open(ctx, "b1", 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, inst.close()) }()
	recv, err := openReceiver(ctx, t, o)
	if err != nil {
		return nil, err
	}
	defer recv.close()
	snd, apart, err := apartChildren(ctx, t, o, recv)
	if err != nil {
		return nil, err
	}
	if snd != nil {
		defer snd.close()
	}
	for i := range o.Endpoints {
		if err := addBenchEndpoint(ctx, inst, recv, fmt.Sprintf("/b1/ep%d", i), false); err != nil {
			return nil, err
		}
	}
	total := o.Messages * o.Endpoints
	bar := startProgress(o.Progress, t.name()+" B1 deliveries", total, recv.deliveredCount)
	before := sampleUsage(ctx, t, true, apart)
	run, err := sendMessages(ctx, snd, inst, "B1", o.Messages, o.Producers, o.Stall)
	start, sent, lats := run.start, run.end.Sub(run.start), run.lats
	if err == nil {
		err = waitFor(ctx, "verified deliveries", o.Stall, 5*time.Millisecond, recv.reached(total))
	}
	bar.finish()
	if err != nil {
		return nil, err
	}
	last, err := recv.lastArrival()
	if err != nil {
		return nil, err
	}
	delivered := last.Sub(start)
	// The last request arrived; wait until the store has recorded every delivery too.
	err = waitFor(ctx, "deliveries recorded", o.Stall, 20*time.Millisecond, func() (int, bool, error) {
		n, err := inst.count(ctx, hookd.DeliveryPending)
		return -n, n == 0, err
	})
	if err != nil {
		return nil, err
	}
	settled := time.Since(start)
	after := sampleUsage(ctx, t, false, apart)
	recorded, err := inst.count(ctx, hookd.DeliveryDelivered)
	if err != nil {
		return nil, err
	}
	counts, err := recv.counts(total)
	if err != nil {
		return nil, err
	}
	res := &b1Result{
		Endpoints: o.Endpoints, Messages: o.Messages, Producers: o.Producers, Deliveries: total,
		SendSeconds: sent.Seconds(), SendsPerSec: float64(o.Messages) / sent.Seconds(),
		SendP50Ms: millis(percentile(lats, 50)), SendP99Ms: millis(percentile(lats, 99)),
		DeliverSeconds: delivered.Seconds(), DeliveriesPerSec: float64(total) / delivered.Seconds(),
		SettledSeconds: settled.Seconds(), RecordedDelivered: recorded,
		TargetDeliveriesPerSec: t.targetDeliveriesPerSec(), TargetSendsPerSec: t.targetSendsPerSec(),
		Receiver: counts, Resources: after.since(before, total),
	}
	res.judge()
	return res, nil
}

// runB2 measures isolation: the same healthy deliveries without, then with, an endpoint that
// never answers.
func runB2(ctx context.Context, t benchTarget, o *Options) (*b2Result, error) {
	res := &b2Result{
		HealthyEndpoints: o.Endpoints - 1, Messages: o.B2Messages, TimeoutMs: millis(o.B2Timeout),
		TargetRatio: b2TargetRatio,
	}
	var err error
	if res.Baseline, err = runB2Once(ctx, t, o, false); err != nil {
		return nil, fmt.Errorf("without the hanging endpoint: %w", err)
	}
	if res.WithHanging, err = runB2Once(ctx, t, o, true); err != nil {
		return nil, fmt.Errorf("with the hanging endpoint: %w", err)
	}
	res.Ratio = res.WithHanging.Seconds / res.Baseline.Seconds
	res.Met = res.Ratio <= b2TargetRatio
	return res, nil
}

// runB2Once sends B2's messages to its healthy endpoints, and to a hanging one when hang is set,
// and times the healthy deliveries.
func runB2Once(ctx context.Context, t benchTarget, o *Options, hang bool) (_ *b2Run, err error) {
	name, label := "b2-baseline", "B2 without hanging"
	if hang {
		name, label = "b2-hanging", "B2 with hanging"
	}
	inst, err := t.open(ctx, name, o.B2Timeout)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, inst.close()) }()
	recv, err := openReceiver(ctx, t, o)
	if err != nil {
		return nil, err
	}
	defer recv.close() // first, so the hanging requests are cut before the client stops
	snd, _, err := apartChildren(ctx, t, o, recv)
	if err != nil {
		return nil, err
	}
	if snd != nil {
		defer snd.close()
	}
	for i := range o.Endpoints - 1 {
		if err := addBenchEndpoint(ctx, inst, recv, fmt.Sprintf("/b2/ep%d", i), false); err != nil {
			return nil, err
		}
	}
	if hang {
		if err := addBenchEndpoint(ctx, inst, recv, "/b2/hang", true); err != nil {
			return nil, err
		}
	}
	total := o.B2Messages * (o.Endpoints - 1)
	bar := startProgress(o.Progress, t.name()+" "+label, total, recv.deliveredCount)
	run, err := sendMessages(ctx, snd, inst, "B2", o.B2Messages, o.Producers, o.Stall)
	if err == nil {
		err = waitFor(ctx, "verified healthy deliveries", o.Stall, 5*time.Millisecond, recv.reached(total))
	}
	if err == nil && hang {
		// The hanging endpoint's requests are what the run is measured beside: wait for the
		// first, which a small run's healthy deliveries may finish before (it does not move the
		// time measured, the last healthy arrival's).
		err = waitFor(ctx, "a request to the hanging endpoint", o.Stall, 5*time.Millisecond, func() (int, bool, error) {
			c, err := recv.counts(total)
			return c.HangingRequests, c.HangingRequests > 0, err
		})
	}
	bar.finish()
	if err != nil {
		return nil, err
	}
	last, err := recv.lastArrival()
	if err != nil {
		return nil, err
	}
	counts, err := recv.counts(total)
	if err != nil {
		return nil, err
	}
	return &b2Run{Seconds: last.Sub(run.start).Seconds(), Receiver: counts}, nil
}

// runB3 measures latency: single sends in a row, each waited for at the receiver.
func runB3(ctx context.Context, t benchTarget, o *Options) (_ *b3Result, err error) {
	inst, err := t.open(ctx, "b3", 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, inst.close()) }()
	// With --apart the receiver is a child and timestamps each arrival; the sends, one at a
	// time, stay in this process.
	recv, err := openReceiver(ctx, t, o)
	if err != nil {
		return nil, err
	}
	defer recv.close()
	const path = "/b3/ep0"
	if err := addBenchEndpoint(ctx, inst, recv, path, false); err != nil {
		return nil, err
	}
	bar := startProgress(o.Progress, t.name()+" B3 single sends", o.B3Sends, recv.deliveredCount)
	var lats, sendLats []time.Duration
	for i := range o.B3Sends {
		start := time.Now()
		id, err := inst.send(ctx, benchPayload("B3", i))
		if err != nil {
			bar.finish()
			return nil, fmt.Errorf("send message %d: %w", i, err)
		}
		sendLats = append(sendLats, time.Since(start))
		at, err := recv.waitArrival(ctx, id, path, o.Stall)
		if err != nil {
			bar.finish()
			return nil, err
		}
		lats = append(lats, at.Sub(start))
	}
	bar.finish()
	counts, err := recv.counts(o.B3Sends)
	if err != nil {
		return nil, err
	}
	res := &b3Result{
		Sends: o.B3Sends, P50Ms: millis(percentile(lats, 50)), P99Ms: millis(percentile(lats, 99)),
		MaxMs: millis(percentile(lats, 100)), SendP50Ms: millis(percentile(sendLats, 50)),
		TargetP50Ms: millis(t.targetP50()), Receiver: counts,
	}
	res.Met = res.P50Ms <= res.TargetP50Ms
	return res, nil
}
