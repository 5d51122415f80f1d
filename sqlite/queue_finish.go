package sqlite

import (
	"context"
	"log/slog"
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

// flush writes a batch of outcomes in one transaction (jobrun.Finisher's flush): worked jobs
// deleted, the others due again at their run_at.
func (q *Queue) flush(batch []outcome) error {
	ctx := hookd.BackgroundWrite(context.Background())
	err := q.s.InTx(ctx, func(tx hookd.Tx) error {
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
		_, err := t.execBatch(ctx, q.s.stmts.deleteJobs, 1, ids)
		return err
	})
	if err != nil {
		q.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: writing job outcomes failed; trying again",
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
		l.wake.Raise()
	}
}
