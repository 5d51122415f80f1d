package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/drain"
)

// Queue timing and policy. See the package documentation.
const (
	FirstPollInterval = 20 * time.Millisecond
	PollInterval      = 100 * time.Millisecond
	// FetchCooldown is the least time between two fetches of one lane.
	FetchCooldown = 2 * time.Millisecond
	// MaxFailures is how often a job's handler may fail (never a snooze) before the job is
	// dropped: with retries backing off to one a minute, about a week.
	MaxFailures = 10_000
	// maxLastError bounds the error text an outcome carries.
	maxLastError = 1000
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

// ErrRunning is what Start returns while a run is on.
var ErrRunning = errors.New("already started")

// Config sets up an Engine.
type Config struct {
	// Name prefixes the engine's errors: "sqlite queue".
	Name   string
	Logger *slog.Logger
	// Workers and JobTimeout are hookd.QueueConfig's, resolved.
	Workers    map[hookd.Lane]int
	JobTimeout time.Duration
	// MaxFetch bounds the jobs one Fetch asks for. Default (0): the free slots, unbounded.
	MaxFetch int
}

// Engine runs a Driver's jobs through the lanes: see the package documentation. Make it with
// New; it is stopped until Start.
type Engine[R any] struct {
	name     string
	driver   Driver[R]
	logger   *slog.Logger
	timeout  time.Duration
	maxFetch int
	lanes    [3]*lane
	fin      *finisher[R]

	mu      sync.Mutex // serializes Start and Stop
	running bool
	stop    chan struct{}      // closed by Stop: the loops end
	cancel  context.CancelFunc // cancels the jobs' context: a hard stop
	loops   sync.WaitGroup
	jobs    sync.WaitGroup

	idle chan func() // the runners waiting for a job (runner.go)
}

// New returns a stopped engine over d.
func New[R any](d Driver[R], cfg Config) *Engine[R] {
	e := &Engine[R]{name: cfg.Name, driver: d, logger: cfg.Logger, timeout: cfg.JobTimeout, maxFetch: cfg.MaxFetch, idle: make(chan func())}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	for i, l := range Lanes {
		poll := PollInterval
		if l == hookd.LaneFirst {
			poll = FirstPollInterval
		}
		e.lanes[i] = &lane{name: l, workers: cfg.Workers[l], poll: poll, wake: newSignal()}
	}
	e.fin = newFinisher(e.settle)
	return e
}

// Wake makes lane l fetch now rather than at its next poll.
func (e *Engine[R]) Wake(l hookd.Lane) { e.lanes[LaneIndex(l)].wake.raise() }

// Horizon is how far ahead lane l fetches: a job due sooner is found by the next fetch.
func (e *Engine[R]) Horizon(l hookd.Lane) time.Duration { return 2 * e.lanes[LaneIndex(l)].poll }

// SetPoll sets the poll interval of every lane, for tests; call it before Start.
func (e *Engine[R]) SetPoll(d time.Duration) {
	for _, ln := range e.lanes {
		ln.poll = d
	}
}

// slots are the worker slots of one run, by LaneIndex. A job that outlives its run's hard stop
// frees its slot in that run, not in the next.
type slots struct {
	mu   sync.Mutex
	busy [3]int
}

// Start begins a run that works jobs with h. It reports ErrRunning when a run is on, and the
// driver's Open error as it is. Cancelling ctx stops the run as Stop does, with the job timeout
// for the jobs to finish.
func (e *Engine[R]) Start(ctx context.Context, h hookd.JobHandler) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running {
		return fmt.Errorf("%s: start: %w", e.name, ErrRunning)
	}
	if err := e.driver.Open(ctx); err != nil {
		return err
	}
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := make(chan struct{})
	e.stop, e.cancel, e.running = stop, cancel, true
	e.fin.start()
	run := &slots{}
	for _, ln := range e.lanes {
		e.loop(func() { e.fetchLoop(jobCtx, stop, run, ln, h) })
	}
	if l, ok := e.driver.(Listener); ok {
		e.loop(func() {
			lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			defer cancel()
			go func() {
				<-stop
				cancel()
			}()
			l.Listen(lctx, e.Wake)
		})
	}
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				sctx, scancel := context.WithTimeout(context.Background(), e.timeout)
				defer scancel()
				_ = e.stopIf(sctx, stop)
			case <-stop:
			}
		}()
	}
	return nil
}

// loop runs fn, a loop that returns once the run's stop channel is closed, as part of the run.
func (e *Engine[R]) loop(fn func()) {
	e.loops.Add(1)
	go func() {
		defer e.loops.Done()
		fn()
	}()
}

// Stop ends the run: the loops stop, and the jobs in flight are waited for until ctx ends. Jobs
// still running then have their context cancelled, and Stop waits drain.HardStop more for them and
// returns an error wrapping ctx's. Then it settles the outcomes waiting and closes the driver. A
// stopped engine's Stop returns nil.
func (e *Engine[R]) Stop(ctx context.Context) error {
	e.mu.Lock()
	stop := e.stop
	e.mu.Unlock()
	return e.stopIf(ctx, stop)
}

// stopIf stops the run if it is still the one whose stop channel is stop.
func (e *Engine[R]) stopIf(ctx context.Context, stop chan struct{}) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.running || e.stop != stop {
		return nil
	}
	close(e.stop)
	e.loops.Wait()
	drained := make(chan struct{})
	go func() {
		e.jobs.Wait()
		close(drained)
	}()
	err := drain.Wait(ctx, e.name, drained, e.cancel)
	e.cancel()
	err = errors.Join(err, e.fin.stop(), e.driver.Close())
	e.running = false
	return err
}

// settle is the finisher's flush: one Settle of the batch.
func (e *Engine[R]) settle(batch []Outcome[R]) error {
	ctx := context.Background()
	if err := e.driver.Settle(ctx, batch); err != nil {
		e.logger.LogAttrs(ctx, slog.LevelWarn, "hookd queue: writing job outcomes failed; trying again",
			slog.Int("jobs", len(batch)), slog.String("error", err.Error()))
		return err
	}
	return nil
}

// signal wakes one waiter: a lane's fetch loop, a finisher. Raising it while it is raised does
// nothing, so a burst of raises makes one wake.
type signal chan struct{}

func newSignal() signal { return make(signal, 1) }

func (s signal) raise() {
	select {
	case s <- struct{}{}:
	default:
	}
}
