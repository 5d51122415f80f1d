package redisqueue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// BenchmarkEnqueueAndWork enqueues b.N no-op first-attempt jobs in store transactions of 100 jobs
// each (enqueued after each commit), then starts the queue and waits until every job was worked.
// It reports jobs/s for each phase; ns/op covers both. Run with a fixed count, e.g.
//
//	HOOKD_TEST_REDIS_URL=redis://127.0.0.1:6379/0 go test -run '^$' -bench EnqueueAndWork -benchtime 20000x ./redisqueue
func BenchmarkEnqueueAndWork(b *testing.B) {
	const batch = 100
	u := redisURL(b)
	store := openStore(b)
	q := newQueue(b, u, store, nil, nil)
	n := b.N
	var worked atomic.Int64
	all := make(chan struct{})
	handler := func(context.Context, hookd.Job) error {
		if worked.Add(1) == int64(n) {
			close(all)
		}
		return nil
	}
	jobs := make([]hookd.Job, 0, batch)

	b.ResetTimer()
	began := time.Now()
	for i := 0; i < n; i += batch {
		jobs = jobs[:0]
		for j := i; j < min(i+batch, n); j++ {
			jobs = append(jobs, hookd.Job{DeliveryID: fmt.Sprintf("dlv_%08d", j), Attempt: 1, Trigger: hookd.TriggerScheduled})
		}
		enqueue(b, store, q, jobs...)
	}
	enqueued := time.Since(began)

	began = time.Now()
	start(b, q, handler)
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d jobs worked in 10 min", worked.Load(), n)
	}
	done := time.Since(began)
	b.StopTimer()

	b.ReportMetric(float64(n)/enqueued.Seconds(), "enqueued/s")
	b.ReportMetric(float64(n)/done.Seconds(), "worked/s")
}

// BenchmarkEnqueueToHandler measures one job at a time, from the start of the transaction that
// enqueues it to the handler's call, on a running queue.
func BenchmarkEnqueueToHandler(b *testing.B) {
	u := redisURL(b)
	store := openStore(b)
	q := newQueue(b, u, store, nil, nil)
	called := make(chan struct{})
	start(b, q, func(context.Context, hookd.Job) error {
		called <- struct{}{}
		return nil
	})
	b.ResetTimer()
	for i := range b.N {
		enqueue(b, store, q, hookd.Job{DeliveryID: fmt.Sprintf("dlv_%08d", i), Attempt: 1, Trigger: hookd.TriggerScheduled})
		select {
		case <-called:
		case <-time.After(10 * time.Second):
			b.Fatalf("job %d not worked in 10 s", i)
		}
	}
}
