package sqlite

import (
	"context"
	"sync"
	"time"
)

// backgroundMaxWait bounds how long a background transaction (hookd.BackgroundWrite: the
// workers' records, the queue's outcomes) waits behind request transactions (a Send's) for the
// write connection.
const backgroundMaxWait = 50 * time.Millisecond

// writeGate orders the store's own transactions (InTx) on its one write connection. Without it
// the waiters of database/sql's pool are served in no order; with it, a waiting request
// transaction begins before waiting background ones, unless the oldest background one has
// waited backgroundMaxWait. A request's latency then does not queue behind the workers' writes,
// which are batched and grow to absorb the wait.
type writeGate struct {
	mu         sync.Mutex
	held       bool
	urgent     []*gateWaiter
	background []*gateWaiter
}

type gateWaiter struct {
	ready chan struct{} // closed when the gate is granted
	since time.Time
}

// acquire waits for the gate. It returns ctx's error, without the gate, when ctx ends first.
func (g *writeGate) acquire(ctx context.Context, background bool) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{ready: make(chan struct{}), since: time.Now()}
	if background {
		g.background = append(g.background, w)
	} else {
		g.urgent = append(g.urgent, w)
	}
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	select {
	case <-w.ready: // granted meanwhile: pass it on
		g.mu.Unlock()
		g.release()
	default:
		g.urgent = removeWaiter(g.urgent, w)
		g.background = removeWaiter(g.background, w)
		g.mu.Unlock()
	}
	return ctx.Err()
}

// release passes the gate to the next waiter, or frees it.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next *gateWaiter
	switch {
	case len(g.background) > 0 && (len(g.urgent) == 0 || time.Since(g.background[0].since) >= backgroundMaxWait):
		next, g.background = g.background[0], g.background[1:]
	case len(g.urgent) > 0:
		next, g.urgent = g.urgent[0], g.urgent[1:]
	default:
		g.held = false
		return
	}
	close(next.ready)
}

func removeWaiter(ws []*gateWaiter, w *gateWaiter) []*gateWaiter {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}

// waiting reports whether a transaction waits for the gate: a long background transaction (the
// retention cleaner's) checks it between its steps and commits early, so that the waiter goes.
func (g *writeGate) waiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.urgent) > 0 || len(g.background) > 0
}
