package riverqueue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// BenchmarkEnqueueAndWork enqueues b.N no-op first-attempt jobs in application transactions of
// 100 jobs each, then starts the queue and waits until River has recorded every job completed.
// It reports jobs/s for each phase; ns/op covers both. Run with a fixed count, e.g.
//
//	go test -run '^$' -bench EnqueueAndWork -benchtime 20000x ./riverqueue
func BenchmarkEnqueueAndWork(b *testing.B) {
	const batch = 100
	bn := setup(b)
	q := newQueue(b, bn.db, nil)
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
		enqueue(b, bn.db, q, jobs...)
	}
	enqueued := time.Since(began)

	began = time.Now()
	start(b, q, handler)
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d jobs worked in 10 min", worked.Load(), n)
	}
	for completedJobs(b, bn) < n {
		time.Sleep(20 * time.Millisecond)
	}
	done := time.Since(began)
	b.StopTimer()

	b.ReportMetric(float64(n)/enqueued.Seconds(), "enqueued/s")
	b.ReportMetric(float64(n)/done.Seconds(), "worked/s")
}

func completedJobs(b *testing.B, bn *bundle) int {
	var c int
	if err := bn.db.QueryRow(`SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&c); err != nil {
		b.Fatal(err)
	}
	return c
}
