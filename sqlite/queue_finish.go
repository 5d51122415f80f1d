package sqlite

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

// outcome is what became of one job: deleted (worked, or dropped), or due again at runAt.
type outcome struct {
	lane       *lane
	id         int64
	gen        uint64
	reschedule bool
	runAt      time.Time
	failures   int
	lastError  string
}

// finisher writes the jobs' outcomes, group-committed: a flush writes every outcome waiting by
// then in one transaction, so under load a few transactions carry thousands of outcomes.
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
	f.kickLoop()
}

func (f *finisher) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.kick:
			if err := f.flush(); err != nil {
				select {
				case <-time.After(flushRetry):
					f.kickLoop()
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

// kickLoop makes the loop flush.
func (f *finisher) kickLoop() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// stop writes what is waiting and ends the loop; it returns the error of that last write.
func (f *finisher) stop() error {
	close(f.quit)
	<-f.done
	return f.lastErr
}

// flush writes the waiting outcomes in one transaction; when it fails they stay waiting.
func (f *finisher) flush() error {
	f.mu.Lock()
	batch := f.pending
	f.pending = nil
	f.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ctx := hookd.BackgroundWrite(context.Background())
	err := f.q.s.InTx(ctx, func(tx hookd.Tx) error {
		t := tx.(*txn)
		var ids []any
		for _, o := range batch {
			if !o.reschedule {
				ids = append(ids, o.id)
				continue
			}
			if _, err := t.sqlTx.ExecContext(ctx, `UPDATE hookd_jobs SET run_at = ?, failures = ?, last_error = ? WHERE id = ?`,
				o.runAt.UnixMicro(), o.failures, o.lastError, o.id); err != nil {
				return err
			}
		}
		_, err := t.execBatch(ctx, f.q.s.stmts.deleteJobs, 1, ids)
		return err
	})
	if err != nil {
		f.mu.Lock()
		f.pending = append(batch, f.pending...)
		f.mu.Unlock()
		f.q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: writing job outcomes failed; trying again",
			slog.Int("jobs", len(batch)), slog.String("error", err.Error()))
		return err
	}
	for _, o := range batch {
		o.lane.settle(o.id, o.gen, o.reschedule)
	}
	return nil
}

// settle records that the outcome of job id, fetched in run gen, is committed.
func (l *lane) settle(id int64, gen uint64, due bool) {
	l.mu.Lock()
	if l.gen == gen {
		l.seq++
		delete(l.running, id)
		l.settled[id] = l.seq
	}
	l.mu.Unlock()
	if due {
		l.wake()
	}
}
