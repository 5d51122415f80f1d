package jobqueue

import (
	"sync"
	"time"
)

// finisher settles outcomes in batches: a flush writes every outcome waiting by then, so under
// load a few writes carry thousands of outcomes. A flush that fails keeps its outcomes waiting,
// and the next is tried after flushRetry. Outcomes added while it is stopped (by a job that
// outlived a hard stop) wait for the next start.
type finisher[R any] struct {
	flush func(batch []Outcome[R]) error

	mu      sync.Mutex
	pending []Outcome[R]
	kick    signal
	quit    chan struct{}
	done    chan struct{}
	lastErr error
}

// flushRetry is the wait before a failed flush is tried again.
const flushRetry = 100 * time.Millisecond

func newFinisher[R any](flush func(batch []Outcome[R]) error) *finisher[R] {
	return &finisher[R]{flush: flush, kick: newSignal()}
}

// start begins writing.
func (f *finisher[R]) start() {
	f.quit, f.done = make(chan struct{}), make(chan struct{})
	go f.loop()
}

// add hands o to the finisher.
func (f *finisher[R]) add(o Outcome[R]) {
	f.mu.Lock()
	f.pending = append(f.pending, o)
	f.mu.Unlock()
	f.kick.raise()
}

func (f *finisher[R]) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.kick:
			if err := f.write(); err != nil {
				select {
				case <-time.After(flushRetry):
					f.kick.raise()
				case <-f.quit:
					f.lastErr = f.write()
					return
				}
			}
		case <-f.quit:
			f.lastErr = f.write()
			return
		}
	}
}

// stop writes what is waiting and ends the loop; it returns the error of that last write.
func (f *finisher[R]) stop() error {
	close(f.quit)
	<-f.done
	return f.lastErr
}

// write flushes the waiting outcomes; when that fails they stay waiting, ahead of newer ones.
func (f *finisher[R]) write() error {
	f.mu.Lock()
	batch := f.pending
	f.pending = nil
	f.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := f.flush(batch); err != nil {
		f.mu.Lock()
		f.pending = append(batch, f.pending...)
		f.mu.Unlock()
		return err
	}
	return nil
}
