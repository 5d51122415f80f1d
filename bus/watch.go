package bus

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// watcher dispatches the events this process published as soon as their transaction commits.
// The bus cannot see a caller's commit, so it looks for the events it wrote: every watchInterval
// while any is waiting, for up to watchFor (a transaction rolled back leaves nothing to find; one
// that commits later still is found by the poll).
type watcher struct {
	b *Bus

	mu      sync.Mutex
	waiting map[string]time.Time // event id → when it was published
	ready   []string             // committed (a store transaction said so), to dispatch
	kick    chan struct{}
}

const (
	watchInterval = 2 * time.Millisecond
	watchFor      = time.Minute
	watchBatch    = 500
)

func newWatcher(b *Bus) *watcher {
	return &watcher{b: b, waiting: map[string]time.Time{}, kick: make(chan struct{}, 1)}
}

// add watches ids, published in a transaction the bus cannot see commit.
func (w *watcher) add(ids []string) {
	now := time.Now()
	w.mu.Lock()
	for _, id := range ids {
		w.waiting[id] = now
	}
	w.mu.Unlock()
	w.wake()
}

// committed dispatches ids, whose transaction has committed.
func (w *watcher) committed(ids []string) {
	w.mu.Lock()
	w.ready = append(w.ready, ids...)
	w.mu.Unlock()
	w.wake()
}

func (w *watcher) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// run looks for the waiting events until ctx ends.
func (w *watcher) run(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-t.C:
		}
		if more := w.check(ctx); more {
			t.Reset(watchInterval)
		}
	}
}

// check dispatches what committed and reports whether events are still waiting.
func (w *watcher) check(ctx context.Context) bool {
	now := time.Now()
	w.mu.Lock()
	ids := w.ready
	w.ready = nil
	var watched []string
	for id, at := range w.waiting {
		if now.Sub(at) > watchFor {
			delete(w.waiting, id)
			continue
		}
		if len(watched) < watchBatch {
			watched = append(watched, id)
		}
	}
	w.mu.Unlock()
	ids = append(ids, watched...)
	if len(ids) == 0 {
		return false
	}
	recs, err := w.b.out.EventsByID(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			w.b.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "hookd bus: looking for published events failed", slog.String("error", err.Error()))
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.waiting) > 0 || len(w.ready) > 0
	}
	w.mu.Lock()
	for _, r := range recs {
		delete(w.waiting, r.ID)
	}
	more := len(w.waiting) > 0 || len(w.ready) > 0
	w.mu.Unlock()
	for _, r := range recs {
		if r.Status != StatusPending || r.Attempts > 0 {
			continue // a poll found it first
		}
		w.b.inflight.Add(1)
		go func() {
			defer w.b.inflight.Done()
			w.b.dispatch(ctx, r)
		}()
	}
	return more
}
