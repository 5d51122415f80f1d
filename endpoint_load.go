package hookd

import (
	"context"
	"sync"
)

// endpointLoads lets workers that miss the endpoint cache at the same moment share one read of
// the endpoint (its row, its keys, and its application's policy when it inherits one): without
// it, every worker whose job comes due as the cached copy expires reads the endpoint again, and
// an endpoint was read about four times a second under load (its cache lives one second).
type endpointLoads struct {
	mu sync.Mutex
	m  map[string]*endpointLoad
}

// endpointLoad is one read of an endpoint, which the workers that wait on it share.
type endpointLoad struct {
	done    chan struct{} // closed when ep, keys and err are set
	waiters int           // the callers waiting on it besides the one reading; under endpointLoads.mu
	ep      *Endpoint
	keys    []SigningKey
	err     error
}

// do returns the endpoint id as read by load, sharing a read already in flight. A caller whose
// ctx ends stops waiting; the read goes on for the others.
func (l *endpointLoads) do(ctx context.Context, id string, load func() (*Endpoint, []SigningKey, error)) (*Endpoint, []SigningKey, error) {
	l.mu.Lock()
	if in := l.m[id]; in != nil {
		in.waiters++
		l.mu.Unlock()
		select {
		case <-in.done:
			return in.ep, in.keys, in.err
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if l.m == nil {
		l.m = make(map[string]*endpointLoad)
	}
	in := &endpointLoad{done: make(chan struct{})}
	l.m[id] = in
	l.mu.Unlock()

	in.ep, in.keys, in.err = load()
	l.mu.Lock()
	if l.m[id] == in {
		delete(l.m, id)
	}
	l.mu.Unlock()
	close(in.done)
	return in.ep, in.keys, in.err
}

// forget makes the next miss of id read the endpoint anew rather than share a read begun before
// a change (Client.invalidate).
func (l *endpointLoads) forget(id string) {
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
}
