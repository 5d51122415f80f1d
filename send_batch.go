package hookd

import (
	"context"
	"sync"
)

// The steps of a Send: joinSendBatch waits in a batch or leads one; leadSendBatch takes the
// batch and hands the lead on; commitSendBatch writes the batch in one transaction
// (writeSends, send_write.go).

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
// take it, or leads one.
func (c *Client) joinSendBatch(ctx context.Context, app string, m *Message) (*SendResult, error) {
	it := &pendingSend{app: app, msg: m, done: make(chan struct{}), lead: make(chan struct{})}
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
		}
	}
	c.leadSendBatch(context.WithoutCancel(ctx), it)
	<-it.done
	return it.res, it.err
}

// leadSendBatch commits first and every pending send, then passes the lead on (or ends the run).
func (c *Client) leadSendBatch(ctx context.Context, first *pendingSend) {
	b := &c.sends
	b.mu.Lock()
	batch := append([]*pendingSend{first}, b.pending...)
	b.pending = nil
	b.mu.Unlock()

	c.commitSendBatch(ctx, batch)

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

// commitSendBatch writes a batch in one transaction (writeSends); when it fails, each send is
// written alone so that one bad send fails only itself. A send refused before any write keeps
// its error.
func (c *Client) commitSendBatch(ctx context.Context, batch []*pendingSend) {
	if len(batch) > 1 {
		err := c.store.InTx(ctx, func(tx Tx) error { return c.writeSends(ctx, tx, batch) })
		if err == nil {
			for _, it := range batch {
				close(it.done)
			}
			return
		}
		for _, it := range batch {
			it.res = nil
			if !refusedBeforeWrite(it.err) {
				it.err = nil
			}
		}
	}
	for _, it := range batch {
		if it.err == nil {
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
