package hookd

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// The steps of a Send: joinSendBatch waits in a batch or leads one; leadSendBatch writes a
// batch and hands the lead on; commitSendBatch begins a transaction, takes the batch and writes
// it (writeSends, send_write.go).

// sendBatcher commits concurrent Sends together: a caller that finds fewer than max batches
// running leads one, writing its own Send and every Send waiting by then in one transaction, and
// when done hands the lead to the first caller that arrived meanwhile. Under load this turns many
// small transactions (each with its own commit and its own job insert) into a few large ones; a
// lone Send runs at once, alone. max is 1 for a store whose database has one writer in this
// process (SQLite), and sendBatchesApart for a database apart (PostgreSQL), whose connections
// commit in parallel.
type sendBatcher struct {
	mu      sync.Mutex
	pending []*pendingSend // waiting for a batch to take them, or for the lead
	running int
	max     int
}

// sendBatchesApart is how many send transactions run at once on a database apart. A batch is
// three round trips whatever its size, so two at once keep the connection busy while one
// commits; more only split the sends into smaller batches, and each commit costs the server
// more than the rows it writes (BenchmarkSendPostgres on two cores: 2,358-2,480 sends/s and
// 442-455 µs of PostgreSQL CPU a send at 2, against 2,006-2,097 and 582-600 at 4, 2,096-2,134
// and 345-353 at 1).
const sendBatchesApart = 2

// pendingSend is one Send in the batcher: waiting in a batch, leading one, or answered.
type pendingSend struct {
	ctx  context.Context // the caller's: it bounds the wait to begin writing, never the writing
	app  string
	msg  *Message
	res  *SendResult
	err  error
	done chan struct{} // closed when res/err are set
	lead chan struct{} // closed when this caller, taken out of pending, is to lead a batch

	// admitted is set once the send has taken its place in the application's message rate, so
	// that writing it again alone, after its batch failed, does not take a second.
	admitted bool
}

// joinSendBatch writes m for app in a batch with concurrent sends: it waits for a batch to
// take it, or leads one. A caller whose ctx ends while it waits in pending leaves with an error
// wrapping ErrWriterBusy; once a batch has taken it, the batch commits or rolls back whole, and
// the caller has its outcome.
func (c *Client) joinSendBatch(ctx context.Context, app string, m *Message) (*SendResult, error) {
	it := &pendingSend{ctx: ctx, app: app, msg: m, done: make(chan struct{}), lead: make(chan struct{})}
	b := &c.sends
	b.mu.Lock()
	leader := b.running < max(b.max, 1)
	if leader {
		b.running++
	} else {
		b.pending = append(b.pending, it)
	}
	b.mu.Unlock()
	if !leader {
		select {
		case <-it.done:
			return it.res, it.err
		case <-it.lead:
		case <-ctx.Done():
			if b.leave(it) {
				return nil, fmt.Errorf("hookd: send to application %q: %w: waited behind earlier sends (likely cause: a transaction open on the same store; send inside it with SendTx, or commit it first): %w", app, ErrWriterBusy, ctx.Err())
			}
			// Taken into a batch, or handed the lead, meanwhile.
			select {
			case <-it.done:
				return it.res, it.err
			case <-it.lead:
			}
		}
	}
	c.leadSendBatch(it)
	<-it.done
	return it.res, it.err
}

// leave takes it out of pending, and reports whether it was still there.
func (b *sendBatcher) leave(it *pendingSend) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.pending, it)
	if i < 0 {
		return false
	}
	b.pending = slices.Delete(b.pending, i, i+1)
	return true
}

// take returns first and every pending send, as one batch.
func (b *sendBatcher) take(first *pendingSend) []*pendingSend {
	b.mu.Lock()
	defer b.mu.Unlock()
	batch := append([]*pendingSend{first}, b.pending...)
	b.pending = nil
	return batch
}

// leadSendBatch commits first and every send pending once its transaction has begun, then
// passes the lead on (or ends the run).
func (c *Client) leadSendBatch(first *pendingSend) {
	c.commitSendBatch(first, func() []*pendingSend { return c.sends.take(first) })
	b := &c.sends
	b.mu.Lock()
	if len(b.pending) > 0 {
		next := b.pending[0]
		b.pending = b.pending[1:]
		close(next.lead)
	} else {
		b.running--
	}
	b.mu.Unlock()
}

// sendContext is the context a send writes in: it waits to begin until the caller's ctx ends,
// and is not cancelled once begun, since the transaction may carry other callers' sends.
func sendContext(ctx context.Context) context.Context {
	return BeginWithin(context.WithoutCancel(ctx), ctx)
}

// commitSendBatch writes the batch take returns (first and the sends pending) once its
// transaction has begun, in that one transaction (writeSends); when it fails, each send is
// written alone so that one bad send fails only itself. A send refused before any write keeps
// its error. When first's wait to begin ends first, only first fails, and take is not called:
// the sends pending stay, for the next lead.
func (c *Client) commitSendBatch(first *pendingSend, take func() []*pendingSend) {
	ctx := sendContext(first.ctx)
	var batch []*pendingSend
	err := c.store.InTx(ctx, func(tx Tx) error {
		if batch == nil {
			batch = take()
		}
		return c.writeSends(ctx, tx, batch)
	})
	switch {
	case batch == nil: // never begun: nothing was written
		first.res, first.err = nil, fmt.Errorf("hookd: send to application %q: %w", first.app, err)
		close(first.done)
		return
	case err == nil:
		for _, it := range batch {
			close(it.done)
		}
		return
	case len(batch) == 1: // written alone already
		first.res, first.err = nil, err
		close(first.done)
		return
	}
	for _, it := range batch {
		it.res = nil
		if !refusedBeforeWrite(it.err) {
			it.err = nil
		}
	}
	for _, it := range batch {
		if it.err == nil {
			ctx := sendContext(it.ctx)
			if err := c.store.InTx(ctx, func(tx Tx) error { return c.writeSends(ctx, tx, []*pendingSend{it}) }); err != nil {
				it.err = err
			}
		}
		if it.err != nil {
			it.res = nil
		}
		close(it.done)
	}
}
