package hookd

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// workLoader coalesces the workers' reads of their deliveries on a WorkBatchLoader store: a
// worker that needs its delivery joins the requests waiting; one goroutine reads them all in one
// statement while the next requests gather. With one worker it adds no wait; under load it turns
// thousands of reads a second into a few hundred.
type workLoader struct {
	store WorkBatchLoader

	mu      sync.Mutex
	waiting []*workRequest
	reading bool // a goroutine is answering the waiting requests
}

type workRequest struct {
	id   string
	done chan struct{}
	work Work
	err  error
}

// maxWorkBatch bounds the deliveries one read takes; loadTimeout bounds the read.
const (
	maxWorkBatch = 500
	loadTimeout  = 30 * time.Second
)

// load returns the delivery id with its message, or an error wrapping ErrNotFound.
func (l *workLoader) load(ctx context.Context, id string) (*Delivery, *Message, error) {
	r := &workRequest{id: id, done: make(chan struct{})}
	l.mu.Lock()
	l.waiting = append(l.waiting, r)
	if !l.reading {
		l.reading = true
		go l.read()
	}
	l.mu.Unlock()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return r.work.Delivery, r.work.Message, nil
}

// read answers the waiting requests, a batch at a time, until none is left.
func (l *workLoader) read() {
	for {
		l.mu.Lock()
		n := min(len(l.waiting), maxWorkBatch)
		if n == 0 {
			l.reading = false
			l.mu.Unlock()
			return
		}
		batch := l.waiting[:n:n]
		l.waiting = l.waiting[n:]
		l.mu.Unlock()

		ids := make([]string, len(batch))
		for i, r := range batch {
			ids[i] = r.id
		}
		ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
		found, err := l.store.LoadWorkBatch(ctx, ids)
		cancel()
		for _, r := range batch {
			switch w, ok := found[r.id]; {
			case err != nil:
				r.err = fmt.Errorf("load delivery %s: %w", r.id, err)
			case !ok:
				r.err = fmt.Errorf("load delivery %s: %w", r.id, ErrNotFound)
			default:
				r.work = w
			}
			close(r.done)
		}
	}
}
