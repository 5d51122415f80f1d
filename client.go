package hookd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd/delivery"
)

// Client is hookd embedded in an application: it sends messages, manages applications and
// endpoints, and, once started, works the delivery jobs.
type Client struct {
	store  Store
	queue  Queue
	cfg    *Config
	http   *delivery.Client
	states *endpointStates
	rec    *recorder
	sends  sendBatcher
	active map[Lane]*jobLimiter // active places of each lane (concurrency.go)
	loader *workLoader          // coalesced reads of the workers' deliveries; nil: one read each
	box    *secretBox           // seals endpoint secrets at rest; nil: stored as they are
	sign   signerCache          // the signers of the keys the workers sign with (signers.go)
	rates  *appRates            // the per-application message rate (quota.go)
	slots  *fleetSlots          // the cap's slots leased across processes; nil: this process keeps it alone
	probe  healthProbe          // Health's write probe (health.go)
	ids    *idSource            // the source of the ids it makes (id.go): the process's on the real clock

	watch   startWatch   // warns when deliveries wait on a client never started (start_watch.go)
	working atomic.Int64 // jobs being worked, for the drain's log line
	snoozed atomic.Int64 // jobs snoozed by their endpoint's isolation (admission), for tests

	mu        sync.Mutex
	started   bool
	opsApp    atomic.Value       // string: the operator's application, when operational webhooks are configured
	cancel    context.CancelFunc // ends the recorder, the payload sweep and background recoveries
	recDone   chan struct{}
	sweepDone chan struct{}
	bgCtx     context.Context // background recoveries' (recover.go); nil when not started
	bg        sync.WaitGroup  // background recoveries running

	retainDone chan struct{} // closes when the retention cleaner returns (retention.go)
	typeDone   chan struct{} // closes when the old attempts' typing returns (attempt_types.go)
	retained   retentionTotal
}

// NewClient returns a Client on store. A nil cfg means every default.
func NewClient(store Store, cfg *Config) (*Client, error) {
	if store == nil {
		return nil, errors.New("hookd: NewClient needs a store (sqlite.Open makes the embedded one)")
	}
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	box, err := newSecretBox(c.MainKey)
	if err != nil {
		return nil, fmt.Errorf("hookd: %w", err)
	}
	q := c.Queue
	if q == nil {
		var err error
		q, err = store.NewQueue(&QueueConfig{Workers: c.Workers, JobTimeout: c.JobTimeout})
		if err != nil {
			return nil, fmt.Errorf("hookd: create the store's queue: %w", err)
		}
	}
	cl := &Client{
		store:  store,
		queue:  q,
		cfg:    c,
		http:   delivery.New(attemptBound(c)),
		states: newEndpointStates(circuitConfig{threshold: c.CircuitThreshold, cooldown: c.CircuitCooldown, maxCooldown: c.CircuitMaxCooldown}),
		box:    box,
		active: newLimiters(c.Workers, c.ActiveWorkers, isInProcess(store)),
		rates:  newAppRates(c.MessageRatePerApp, c.MessageBurstPerApp, c.Now),
	}
	cl.ids = &ids
	if cfg != nil && cfg.Now != nil {
		cl.ids = new(idSource) // its own clock: ids follow it, apart from the process's
	}
	cl.sends.max = sendBatchesApart
	if isInProcess(store) {
		cl.sends.max = 1
	}
	if bl, ok := store.(WorkBatchLoader); ok {
		cl.loader = &workLoader{store: bl}
	}
	if l := slotLeaser(store, q); l != nil && c.SlotLease > 0 {
		cl.slots = newFleetSlots(l, cl.states, c.SlotLease, c.Logger)
	}
	cl.rec = newRecorder(store, c.Logger, cl.writeAttempts)
	return cl, nil
}

// slotLeaser returns the leaser that shares the per-endpoint cap among processes: the queue's
// when it is one, else the store's; none for a store that one process owns (SQLite).
func slotLeaser(store Store, q Queue) SlotLeaser {
	if isInProcess(store) {
		return nil
	}
	if l, ok := q.(SlotLeaser); ok {
		return l
	}
	if l, ok := store.(SlotLeaser); ok {
		return l
	}
	return nil
}

// Store returns the client's store.
func (c *Client) Store() Store { return c.store }

// Start starts the workers. Sends and management calls work without it; deliveries wait for a
// started client (in this process or another on the same database). A client that sends but is
// never started, and whose deliveries nobody works, logs a warning once one has waited
// DefaultUnstartedWarning; set Config.EnqueueOnly on a client that only sends, on purpose.
func (c *Client) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("hookd: client already started")
	}
	if c.cfg.EnqueueOnly {
		return errors.New("hookd: Start on a client with Config.EnqueueOnly, which leaves its jobs to another process: unset it to work them here")
	}
	opsApp, err := c.ensureOperational(ctx)
	if err != nil {
		return err
	}
	c.opsApp.Store(opsApp)
	recCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.recDone = make(chan struct{})
	go func() {
		defer close(c.recDone)
		c.rec.run(recCtx)
	}()
	if c.slots != nil {
		c.slots.start(ctx)
	}
	if err := c.queue.Start(ctx, c.work); err != nil {
		if c.slots != nil {
			c.slots.stop(ctx)
		}
		cancel()
		<-c.recDone
		return fmt.Errorf("hookd: start the queue: %w", err)
	}
	c.sweepDone = make(chan struct{})
	go func() {
		defer close(c.sweepDone)
		c.sweepPayloads(recCtx)
	}()
	c.retainDone = c.startRetention(recCtx)
	c.typeDone = c.startAttemptTyping(recCtx)
	c.cancel = cancel
	c.bgCtx = recCtx
	c.started = true
	c.watch.started.Store(true)
	c.watch.running.Store(true)
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "hookd workers started",
		slog.Int("workers_first", c.cfg.Workers[LaneFirst]), slog.Int("workers_retry", c.cfg.Workers[LaneRetry]),
		slog.Int("workers_manual", c.cfg.Workers[LaneManual]))
	return nil
}

// Stop stops taking jobs and waits for the attempts in flight to finish and be recorded, until ctx
// ends; attempts still running then are abandoned and made again later.
func (c *Client) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopWatch()
	if !c.started {
		return nil
	}
	start, inFlight := time.Now(), c.working.Load()
	err := c.queue.Stop(ctx)
	drained := time.Since(start)
	if err != nil {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "hookd workers stopped before the attempts in flight ended; they are made again later",
			slog.Int64("in_flight", inFlight), slog.Int64("unfinished", c.working.Load()), slog.Duration("waited", drained),
			slog.String("error", err.Error()))
	} else {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "hookd workers drained",
			slog.Int64("in_flight", inFlight), slog.Duration("took", drained))
	}
	if c.slots != nil {
		c.slots.stop(ctx) // the workers have stopped: no attempt holds a slot
	}
	c.cancel()
	<-c.recDone
	<-c.sweepDone
	<-c.retainDone
	<-c.typeDone
	c.bg.Wait()
	c.bgCtx = nil
	c.http.CloseIdleConnections()
	c.started = false
	if err != nil {
		return fmt.Errorf("hookd: stop: %w", err)
	}
	return nil
}

// now is the time a row is stamped with, in UTC and to the microsecond, the precision every store
// keeps: a value returned by a create or an update is the one a later read returns.
func (c *Client) now() time.Time { return c.cfg.Now().UTC().Truncate(time.Microsecond) }
