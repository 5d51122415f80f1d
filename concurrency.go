package hookd

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// A lane's Workers are how many attempts it may have in flight: sized for receivers far away,
// whose attempts wait on the network and cost little CPU. Against receivers that answer in a
// millisecond (on the same machine, or in a benchmark), every worker is busy on the CPU instead,
// and a hundred of them only queue for the cores and the database ahead of the goroutines that
// serve sends, so fewer workers deliver as much while leaving the sends more room.
//
// So a job also takes one of the lane's active places (Config.ActiveWorkers) while it works, and
// gives it back once it has run for slowJob: a job still running then is waiting on a slow
// receiver, and waiting needs no place. Fast attempts are bounded by the CPU places; slow ones by
// Workers alone.
//
// The places are for a store whose database runs in this process (SQLite: hookd.InProcessStore),
// where a job's queries are this process's CPU too. With a database of its own (PostgreSQL) a job
// mostly waits on it, and bounding the jobs that wait only shrinks the batches the database
// gets, which lowers throughput and costs more CPU per delivery. So by default only an
// in-process store gets them. docs/benchmarks.md has the figures.
const slowJob = 10 * time.Millisecond

// jobLimiter bounds the jobs of one lane that are active at once.
type jobLimiter struct {
	mu      sync.Mutex
	limit   int // 0: no bound
	active  int
	waiters []chan struct{}
}

// acquire waits for a place, or for ctx to end. The place is given back by the returned func,
// which may be called more than once, and is called by itself after slowJob.
func (l *jobLimiter) acquire(ctx context.Context) (release func(), err error) {
	if l.limit <= 0 {
		return func() {}, nil
	}
	l.mu.Lock()
	if l.active < l.limit && len(l.waiters) == 0 {
		l.active++
		l.mu.Unlock()
		return l.placeRelease(), nil
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return l.placeRelease(), nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-ch: // granted meanwhile: give it back
		l.active--
		l.grant()
	default:
		for i, w := range l.waiters {
			if w == ch {
				l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
				break
			}
		}
	}
	return nil, ctx.Err()
}

// placeRelease returns the release func of a place just taken: the first call (by the job, or
// by a timer after slowJob) gives the place back.
func (l *jobLimiter) placeRelease() func() {
	var once sync.Once
	rel := func() {
		once.Do(func() {
			l.mu.Lock()
			l.active--
			l.grant()
			l.mu.Unlock()
		})
	}
	t := time.AfterFunc(slowJob, rel)
	return func() {
		t.Stop()
		rel()
	}
}

// grant lets waiters in while there is room; l.mu is held.
func (l *jobLimiter) grant() {
	for l.active < l.limit && len(l.waiters) > 0 {
		close(l.waiters[0])
		l.waiters = l.waiters[1:]
		l.active++
	}
}

// newLimiters returns a limiter for each lane: active places, at most the lane's workers.
// active 0 means the default: 4 per CPU for an in-process store, no bound otherwise.
func newLimiters(workers map[Lane]int, active int, inProcess bool) map[Lane]*jobLimiter {
	if active == 0 {
		active = -1
		if inProcess {
			active = 4 * runtime.GOMAXPROCS(0)
		}
	}
	out := make(map[Lane]*jobLimiter, 3)
	for _, lane := range []Lane{LaneFirst, LaneRetry, LaneManual} {
		n := workers[lane]
		if n <= 0 {
			n = DefaultLaneWorkers(lane)
		}
		l := &jobLimiter{}
		if active > 0 {
			l.limit = min(n, active)
		}
		out[lane] = l
	}
	return out
}
