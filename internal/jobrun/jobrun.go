// Package jobrun is what the SQL stores' queues share: the run between Start and Stop (its loops,
// its jobs, the hard stop), a lane's fetch loop, and the finisher that writes jobs' outcomes in
// batches. Each queue keeps its own SQL: how it fetches, and how it writes an outcome.
package jobrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

// Lanes are hookd's lanes, in the order LaneIndex numbers them.
var Lanes = [3]hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual}

// LaneIndex is l's index in Lanes; an unknown lane counts as the first.
func LaneIndex(l hookd.Lane) int {
	switch l {
	case hookd.LaneRetry:
		return 1
	case hookd.LaneManual:
		return 2
	default:
		return 0
	}
}

// Signal wakes one waiter: a lane's fetch loop, a finisher. Raising it while it is raised does
// nothing, so a burst of raises makes one wake. Make it with NewSignal.
type Signal chan struct{}

// NewSignal returns a lowered Signal.
func NewSignal() Signal { return make(Signal, 1) }

// Raise raises s.
func (s Signal) Raise() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// HardStopWait is how long Stop waits, once its context has ended and the running jobs have been
// cancelled, for them to return.
const HardStopWait = 5 * time.Second

// Run is one queue's run: Start begins it, Stop ends it. The zero value is stopped.
type Run struct {
	mu      sync.Mutex // serializes Start and Stop
	running bool
	stop    chan struct{}      // closed by Stop: the loops end
	cancel  context.CancelFunc // cancels the jobs' context: a hard stop
	loops   sync.WaitGroup
	jobs    sync.WaitGroup
	end     func() error
}

// Start begins a run: begin starts its loops (with Loop) given the jobs' context and the channel
// Stop closes, and returns end, which Stop calls once every job has returned (the finisher's
// last flush). Start reports errAlready when the run is on. Cancelling ctx stops the run as Stop
// does, with stopTimeout for the jobs to finish.
func (r *Run) Start(ctx context.Context, name string, stopTimeout time.Duration, begin func(jobCtx context.Context, stop <-chan struct{}) (end func() error, err error)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running {
		return fmt.Errorf("%s: start: %w", name, ErrRunning)
	}
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := make(chan struct{})
	end, err := begin(jobCtx, stop)
	if err != nil {
		cancel()
		return err
	}
	r.stop, r.cancel, r.end, r.running = stop, cancel, end, true
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				sctx, scancel := context.WithTimeout(context.Background(), stopTimeout)
				defer scancel()
				_ = r.stopIf(sctx, name, stop)
			case <-stop:
			}
		}()
	}
	return nil
}

// ErrRunning is what Start returns while a run is on.
var ErrRunning = errors.New("already started")

// Loop runs fn, a loop that returns once the run's stop channel is closed, as part of the run.
// Call it from begin.
func (r *Run) Loop(fn func()) {
	r.loops.Add(1)
	go func() {
		defer r.loops.Done()
		fn()
	}()
}

// Job runs fn, one job, as part of the run: Stop waits for it.
func (r *Run) Job(fn func()) {
	r.jobs.Add(1)
	go func() {
		defer r.jobs.Done()
		fn()
	}()
}

// Stop ends the run: the loops stop, and the jobs in flight are waited for until ctx ends. Jobs
// still running then have their context cancelled, and Stop waits HardStopWait more for them and
// returns an error wrapping ctx's. Then it calls the run's end. A stopped run's Stop returns nil.
func (r *Run) Stop(ctx context.Context, name string) error {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	return r.stopIf(ctx, name, stop)
}

// stopIf stops the run if it is still the one whose stop channel is stop.
func (r *Run) stopIf(ctx context.Context, name string, stop chan struct{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running || r.stop != stop {
		return nil
	}
	close(r.stop)
	r.loops.Wait()
	drained := make(chan struct{})
	go func() {
		r.jobs.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		r.cancel()
		select {
		case <-drained:
			err = fmt.Errorf("%s: stop: jobs in flight cancelled: %w", name, ctx.Err())
		case <-time.After(HardStopWait):
			err = fmt.Errorf("%s: stop: jobs cancelled but still running after %s: %w", name, HardStopWait, ctx.Err())
		}
	}
	r.cancel()
	if r.end != nil {
		if eerr := r.end(); eerr != nil {
			err = errors.Join(err, eerr)
		}
	}
	r.running = false
	return err
}

// FetchLoop fetches jobs into a lane's free slots until stop is closed: at once, then whenever
// wake has a value, and at the latest every poll; after a fetch that filled every free slot, again
// after cooldown. Between two fetches it pauses cooldown, which bounds the fetch rate when wakes
// come back to back and lets the jobs that come due meanwhile share the next fetch. start runs
// each job fetched; failed is told a fetch's error.
func FetchLoop[J any](ctx context.Context, stop <-chan struct{}, wake <-chan struct{}, poll, cooldown time.Duration,
	fetch func(ctx context.Context) (jobs []J, full bool, err error), start func(J), failed func(error)) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		jobs, full, err := fetch(ctx)
		if err != nil && ctx.Err() == nil {
			failed(err)
		}
		for _, j := range jobs {
			start(j)
		}
		next := poll
		if full {
			next = cooldown
		}
		t.Reset(next)
		select {
		case <-stop:
			return
		case <-time.After(cooldown):
		}
	}
}

// Finisher writes outcomes in batches: a flush writes every outcome waiting by then, so under
// load a few writes carry thousands of outcomes. A flush that fails keeps its outcomes waiting,
// and the next is tried after FlushRetry.
type Finisher[O any] struct {
	flush func(batch []O) error

	mu      sync.Mutex
	pending []O
	kick    Signal
	quit    chan struct{}
	done    chan struct{}
	lastErr error
}

// FlushRetry is the wait before a failed flush is tried again.
const FlushRetry = 100 * time.Millisecond

// NewFinisher returns a finisher that writes batches with flush.
func NewFinisher[O any](flush func(batch []O) error) *Finisher[O] {
	return &Finisher[O]{flush: flush, kick: NewSignal()}
}

// Start begins writing.
func (f *Finisher[O]) Start() {
	f.quit, f.done = make(chan struct{}), make(chan struct{})
	go f.loop()
}

// Add hands o to the finisher.
func (f *Finisher[O]) Add(o O) {
	f.mu.Lock()
	f.pending = append(f.pending, o)
	f.mu.Unlock()
	f.kick.Raise()
}

func (f *Finisher[O]) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.kick:
			if err := f.write(); err != nil {
				select {
				case <-time.After(FlushRetry):
					f.kick.Raise()
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

// Stop writes what is waiting and ends the loop; it returns the error of that last write.
func (f *Finisher[O]) Stop() error {
	close(f.quit)
	<-f.done
	return f.lastErr
}

// write flushes the waiting outcomes; when that fails they stay waiting, ahead of newer ones.
func (f *Finisher[O]) write() error {
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
