package hookd

import (
	"context"
	"sync"
)

// sendBatcher commits concurrent Sends together: the first caller to find no batch running leads,
// writing every Send waiting by then in one transaction, and hands the lead to a caller that
// arrived meanwhile. Under load this turns many small transactions (each with its own commit and
// its own job insert) into a few large ones; a lone Send runs at once, alone.
type sendBatcher struct {
	mu      sync.Mutex
	pending []*sendItem
	running bool
}

type sendItem struct {
	app  string
	msg  *Message
	res  *SendResult
	err  error
	done chan struct{} // closed when res/err are set
	lead chan struct{} // closed when this caller is to lead the next batch
}

// send writes msg for app, batched with concurrent sends.
func (c *Client) sendBatched(ctx context.Context, app string, m *Message) (*SendResult, error) {
	it := &sendItem{app: app, msg: m, done: make(chan struct{}), lead: make(chan struct{})}
	b := &c.sends
	b.mu.Lock()
	b.pending = append(b.pending, it)
	leader := !b.running
	if leader {
		b.running = true
	}
	b.mu.Unlock()
	if !leader {
		select {
		case <-it.done:
			return it.res, it.err
		case <-it.lead:
		}
	}
	c.runSendBatch(context.WithoutCancel(ctx))
	<-it.done
	return it.res, it.err
}

// runSendBatch writes every pending send, then passes the lead on (or ends the run).
func (c *Client) runSendBatch(ctx context.Context) {
	b := &c.sends
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	b.mu.Unlock()

	c.writeSends(ctx, batch)

	b.mu.Lock()
	if len(b.pending) > 0 {
		close(b.pending[0].lead)
	} else {
		b.running = false
	}
	b.mu.Unlock()
}

// writeSends writes a batch in one transaction, its jobs in one insert; when it fails, each send is written alone so that
// one bad send (an unknown application) fails only itself.
func (c *Client) writeSends(ctx context.Context, batch []*sendItem) {
	if len(batch) > 1 {
		res := make([]*SendResult, len(batch))
		err := c.store.InTx(ctx, func(tx Tx) error {
			var jobs []Job
			for i, it := range batch {
				r, js, err := c.writeMessage(ctx, tx, it.app, it.msg)
				if err != nil {
					return err
				}
				res[i] = r
				jobs = append(jobs, js...)
			}
			return c.enqueue(ctx, tx, jobs)
		})
		if err == nil {
			for i, it := range batch {
				it.res = res[i]
				close(it.done)
			}
			return
		}
	}
	for _, it := range batch {
		it.err = c.store.InTx(ctx, func(tx Tx) error {
			var err error
			it.res, err = c.sendIn(ctx, tx, it.app, it.msg)
			return err
		})
		if it.err != nil {
			it.res = nil
		}
		close(it.done)
	}
}
