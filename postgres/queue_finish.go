package postgres

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// outcome is what became of one claimed job: deleted (worked, or dropped), or due again at runAt.
type outcome struct {
	id         int64
	claims     int32
	reschedule bool
	runAt      time.Time
	failures   int32
	lastError  string
}

// finisher writes the jobs' outcomes in batches: a flush writes every outcome waiting by then in
// one statement, so under load a few statements carry thousands of outcomes.
type finisher struct {
	q *Queue

	mu      sync.Mutex
	pending []outcome
	kick    chan struct{}
	quit    chan struct{}
	done    chan struct{}
	lastErr error
}

// flushRetry is the wait before a failed flush is tried again.
const flushRetry = 100 * time.Millisecond

func newFinisher(q *Queue) *finisher {
	return &finisher{q: q, kick: make(chan struct{}, 1)}
}

func (f *finisher) start() {
	f.quit, f.done = make(chan struct{}), make(chan struct{})
	go f.loop()
}

// add hands o to the finisher.
func (f *finisher) add(o outcome) {
	f.mu.Lock()
	f.pending = append(f.pending, o)
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

func (f *finisher) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.kick:
			if err := f.flush(); err != nil {
				select {
				case <-time.After(flushRetry):
					f.add(outcome{id: -1}) // kick: the failed batch is waiting again
				case <-f.quit:
					f.lastErr = f.flush()
					return
				}
			}
		case <-f.quit:
			f.lastErr = f.flush()
			return
		}
	}
}

// stop writes what is waiting and ends the loop; it returns the error of that last write.
func (f *finisher) stop() error {
	close(f.quit)
	<-f.done
	return f.lastErr
}

// finishJobsSQL deletes the finished jobs and reschedules the others, each only if it is still
// leased by the claim that ran it.
const finishJobsSQL = `WITH done AS (
	DELETE FROM hookd_jobs AS j USING unnest($1::bigint[], $2::integer[]) AS v (id, claims)
	WHERE j.id = v.id AND j.claims = v.claims
),
again AS (
	UPDATE hookd_jobs AS j SET run_at = v.run_at, failures = v.failures, last_error = v.last_error
	FROM unnest($3::bigint[], $4::integer[], $5::timestamptz[], $6::integer[], $7::text[])
		AS v (id, claims, run_at, failures, last_error)
	WHERE j.id = v.id AND j.claims = v.claims
)
SELECT 1`

// flush writes the waiting outcomes in one statement; when it fails they stay waiting.
func (f *finisher) flush() error {
	f.mu.Lock()
	batch := f.pending
	f.pending = nil
	f.mu.Unlock()
	batch = slices.DeleteFunc(batch, func(o outcome) bool { return o.id < 0 })
	if len(batch) == 0 {
		return nil
	}
	// Rows in id order, so that two processes' statements lock shared rows in one order.
	slices.SortFunc(batch, func(a, b outcome) int { return int(min(max(a.id-b.id, -1), 1)) })
	var (
		doneIDs               []int64
		doneClaims            []int32
		againIDs              []int64
		againClaims, failures []int32
		runAts                []time.Time
		lastErrors            []string
	)
	for _, o := range batch {
		if !o.reschedule {
			doneIDs, doneClaims = append(doneIDs, o.id), append(doneClaims, o.claims)
			continue
		}
		againIDs, againClaims, runAts = append(againIDs, o.id), append(againClaims, o.claims), append(runAts, o.runAt)
		failures, lastErrors = append(failures, o.failures), append(lastErrors, o.lastError)
	}
	ctx := context.Background()
	_, err := f.q.s.pool.Exec(ctx, finishJobsSQL, doneIDs, doneClaims, againIDs, againClaims, runAts, failures, lastErrors)
	if err != nil {
		f.mu.Lock()
		f.pending = append(batch, f.pending...)
		f.mu.Unlock()
		f.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: writing job outcomes failed; trying again",
			slog.Int("jobs", len(batch)), slog.String("error", err.Error()))
		return err
	}
	return nil
}
