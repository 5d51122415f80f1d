package hookd

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hookd/hookd/internal/outage"
)

// maxBatch bounds how many writes share one transaction.
const maxBatch = 256

// recorder writes the workers' results with group commit: every write waiting when a transaction
// starts shares it. Under load this turns hundreds of small transactions a second into a few
// large ones; with one write waiting it adds no delay.
type recorder struct {
	store Store
	// down and fails log the writes that fail, as outages (package outage): down those that
	// fail because the database is unavailable, which Health reads, fails any other.
	down, fails *outage.Cause
	in          chan *recItem
	done        chan struct{} // closed when run returns
	// writeAttemptsFunc writes the attempt writes of a batch together: Client.writeAttempts.
	writeAttemptsFunc func(ctx context.Context, tx Tx, ws []*attemptWrite) error
}

// recItem is one write: an attempt's (merged with the batch's other attempts into a few
// multi-row statements) or any other (apply).
type recItem struct {
	apply   func(ctx context.Context, tx Tx) error
	attempt *attemptWrite
	errc    chan error
}

// attemptWrite is what one attempt writes: its record, the next job, operational events, the
// endpoint to disable, and the ordered endpoint whose next delivery goes now (advance).
type attemptWrite struct {
	rec     AttemptRecord
	next    *Job
	ops     []OperationalEvent
	disable *endpointDisable
	advance string
}

type endpointDisable struct {
	id, reason string
	at         time.Time
}

func newRecorder(store Store, log *slog.Logger, writeAttempts func(ctx context.Context, tx Tx, ws []*attemptWrite) error) *recorder {
	out := outage.New(log, nil)
	return &recorder{store: store, down: out.Cause("record attempts: database unavailable"), fails: out.Cause("record attempts"),
		in: make(chan *recItem, maxBatch), done: make(chan struct{}), writeAttemptsFunc: writeAttempts}
}

// write records an attempt with the batch it joins, and returns once it is committed or failed.
func (r *recorder) write(ctx context.Context, w *attemptWrite) error {
	return r.submit(ctx, &recItem{attempt: w, errc: make(chan error, 1)})
}

// do runs apply in a transaction shared with other writes and returns once it is committed or has
// failed. apply may run twice (once in a batch that failed, once alone); it must only write
// through tx.
func (r *recorder) do(ctx context.Context, apply func(ctx context.Context, tx Tx) error) error {
	return r.submit(ctx, &recItem{apply: apply, errc: make(chan error, 1)})
}

func (r *recorder) submit(ctx context.Context, it *recItem) error {
	select {
	case r.in <- it:
	case <-r.done:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-it.errc:
		return err
	case <-r.done:
		// run drains r.in before closing done, so the item was answered.
		return <-it.errc
	}
}

// run writes batches until ctx ends, then writes what is still waiting and returns.
func (r *recorder) run(ctx context.Context) {
	defer close(r.done)
	batch := make([]*recItem, 0, maxBatch)
	for {
		select {
		case it := <-r.in:
			batch = append(batch[:0], it)
		case <-ctx.Done():
			for {
				select {
				case it := <-r.in:
					r.flush([]*recItem{it})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case it := <-r.in:
				batch = append(batch, it)
			default:
				break fill
			}
		}
		r.flush(batch)
	}
}

// flush writes a batch in one transaction. When it fails, each item is written alone, so one bad
// write does not fail the others.
func (r *recorder) flush(batch []*recItem) {
	ctx := BackgroundWrite(context.Background())
	err := r.store.InTx(ctx, func(tx Tx) error {
		var ws []*attemptWrite
		for _, it := range batch {
			if it.attempt != nil {
				ws = append(ws, it.attempt)
				continue
			}
			if err := it.apply(ctx, tx); err != nil {
				return err
			}
		}
		if len(ws) == 0 {
			return nil
		}
		return r.writeAttemptsFunc(ctx, tx, ws)
	})
	if err == nil || len(batch) == 1 {
		for _, it := range batch {
			it.errc <- err
		}
		switch {
		case errors.Is(err, ErrUnavailable):
			r.down.Fail(err)
		case err != nil:
			r.fails.Fail(err)
		default:
			r.down.OK()
			r.fails.OK()
		}
		return
	}
	for _, it := range batch {
		r.flush([]*recItem{it})
	}
}

// writeAttempts writes a batch's attempts in tx: every record in one RecordAttempts, then the
// endpoints to disable, the operational events, and the next jobs in one insert.
func (c *Client) writeAttempts(ctx context.Context, tx Tx, ws []*attemptWrite) error {
	recs := make([]AttemptRecord, len(ws))
	var ops []OperationalEvent
	var jobs []Job
	var advance []string
	for i, w := range ws {
		recs[i] = w.rec
		ops = append(ops, w.ops...)
		if w.next != nil {
			jobs = append(jobs, *w.next)
		}
		if w.advance != "" && w.disable == nil {
			advance = append(advance, w.advance)
		}
	}
	if err := tx.RecordAttempts(ctx, recs); err != nil {
		return err
	}
	if len(advance) > 0 {
		heads, err := c.advanceAll(ctx, tx, advance, 0)
		if err != nil {
			return err
		}
		jobs = append(jobs, heads...)
	}
	for _, w := range ws {
		if w.advance != "" && w.disable != nil {
			// The endpoint is disabled in this write: the next delivery's job waits out the
			// endpoint cache of every process, so that it finds the endpoint disabled and is
			// cancelled (and so on down the line) rather than sent.
			heads, err := c.advanceAll(ctx, tx, []string{w.advance}, endpointTTL+100*time.Millisecond)
			if err != nil {
				return err
			}
			jobs = append(jobs, heads...)
		}
	}
	for _, w := range ws {
		if d := w.disable; d != nil {
			if err := tx.SetEndpointDisabled(ctx, d.id, true, d.reason, d.at); err != nil {
				return err
			}
		}
	}
	if err := c.emitOps(ctx, tx, ops); err != nil {
		return err
	}
	if len(jobs) > 0 {
		return c.queue.EnqueueTx(ctx, tx, jobs)
	}
	return nil
}
