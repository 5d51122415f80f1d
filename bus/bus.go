// Package bus is a domain event bus for apps that embed hookd: business code publishes events
// (tenancy.invitation.created) in its own database transaction, and subscribers, the webhook
// fan-out among them (SubscribeWebhooks), handle them after the commit.
//
// # Guarantees
//
// Publish writes every event to the outbox (the table hookd_events of the hookd store's database)
// in the caller's transaction: an event is published exactly when the business write commits, so
// "saved but never published" cannot happen. Publish fails when the write fails, and never runs a
// handler, so a handler's failure never fails it.
//
// Every handler subscribed to an event's name runs at least once for the event. An attempt runs
// all of them; when one fails (an error or a panic), the event is retried later, and every handler
// runs again: handlers must be idempotent, or tolerate the rare duplicate. (The webhook fan-out is:
// a message's event id is the event's, so a second send is a duplicate hookd drops.)
//
// The payload is marshalled to JSON once, at Publish, and handlers get those bytes: the first
// dispatch sees exactly what a redelivery from the table would (times as strings, omitted fields
// absent).
//
// # Dispatch and retries
//
// Dispatch starts right after the commit: the bus watches the events this process published until
// they are visible (every 2 ms, for up to a minute; a transaction rolled back leaves nothing to
// see), and a store's own transaction (hookd.Tx from InTx) tells it at once. Other processes, and
// events missed meanwhile, are found by a poll (every second). A failed attempt is retried after
// 30 s, 1 min, 2 min, 4 min, 8 min, then every 15 min; after 8 attempts the event is dead-lettered:
// status failed, with its last error and count of attempts, listed by Failed and made pending again
// by Redrive (or "hookd events redrive").
//
// Several processes may run a bus on one database: an attempt is claimed by adding one to the
// event's count of attempts only if it is still the count the claimer read, so one attempt is
// dispatched by one process; a claim also moves the event's due time past the handlers' timeout,
// so a running attempt is not taken by a poll.
package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

// Config configures a Bus. A nil *Config means every default.
type Config struct {
	// Logger receives failed attempts and dead letters. Default: discard.
	Logger *slog.Logger
	// OnError is called after each failed attempt of an event (dead is true when it was the last):
	// the hook that pages someone. It must not block.
	OnError func(d *Dispatch, err error, dead bool)
	// Now is the bus's clock: occurrence times, and when retries are due. Default: time.Now.
	Now func() time.Time
	// Backoff is the wait after the n-th failed attempt, n from 1; the last entry repeats.
	// Default: 30 s, 1 min, 2 min, 4 min, 8 min, 15 min.
	Backoff []time.Duration
	// MaxAttempts is how many attempts an event gets before it is dead-lettered. Default: 8.
	MaxAttempts int
	// HandlerTimeout bounds one attempt (all of the event's handlers). Default: 1 min.
	HandlerTimeout time.Duration
	// PollInterval is how often the bus looks for due events: retries, and events other
	// processes published. Default: 1 s.
	PollInterval time.Duration
}

// Defaults of Config.
const (
	DefaultMaxAttempts    = 8
	DefaultHandlerTimeout = time.Minute
	DefaultPollInterval   = time.Second
)

// DefaultBackoff is Config.Backoff's default.
var DefaultBackoff = []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 15 * time.Minute}

func (c *Config) withDefaults() (*Config, error) {
	out := Config{}
	if c != nil {
		out = *c
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if len(out.Backoff) == 0 {
		out.Backoff = DefaultBackoff
	}
	for _, d := range out.Backoff {
		if d <= 0 {
			return nil, &hookd.ValidationError{Field: "Config.Backoff", Reason: fmt.Sprintf("has %s; use positive durations", d)}
		}
	}
	switch {
	case out.MaxAttempts < 0:
		return nil, &hookd.ValidationError{Field: "Config.MaxAttempts", Reason: fmt.Sprintf("is %d; use a positive number, or zero for %d", out.MaxAttempts, DefaultMaxAttempts)}
	case out.MaxAttempts == 0:
		out.MaxAttempts = DefaultMaxAttempts
	}
	switch {
	case out.HandlerTimeout < 0:
		return nil, &hookd.ValidationError{Field: "Config.HandlerTimeout", Reason: "is negative; use a positive duration, or zero for the default"}
	case out.HandlerTimeout == 0:
		out.HandlerTimeout = DefaultHandlerTimeout
	}
	switch {
	case out.PollInterval < 0:
		return nil, &hookd.ValidationError{Field: "Config.PollInterval", Reason: "is negative; use a positive duration, or zero for the default"}
	case out.PollInterval == 0:
		out.PollInterval = DefaultPollInterval
	}
	return &out, nil
}

// Bus publishes events to its outbox and dispatches them to its subscribers.
type Bus struct {
	out Outbox
	cfg *Config

	mu       sync.RWMutex
	handlers map[string][]namedHandler

	watch *watcher

	runMu    sync.Mutex
	running  bool
	stop     context.CancelFunc
	wg       sync.WaitGroup // the poll loop and the watcher
	inflight sync.WaitGroup // dispatches the watcher started
	kick     chan struct{}
}

// New returns a bus on out: a hookd store (sqlite.Store or postgres.Store). Publish works at once;
// events are dispatched after Start.
func New(out Outbox, cfg *Config) (*Bus, error) {
	if out == nil {
		return nil, errors.New("bus: New needs an outbox: the hookd store (sqlite.Open or postgres.Open)")
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	b := &Bus{out: out, cfg: c, handlers: map[string][]namedHandler{}, kick: make(chan struct{}, 1)}
	b.watch = newWatcher(b)
	return b, nil
}

// Start begins dispatching: due events at once, then those published afterwards, and every poll
// interval the due retries and the events of other processes.
func (b *Bus) Start(ctx context.Context) error {
	b.runMu.Lock()
	defer b.runMu.Unlock()
	if b.running {
		return errors.New("bus: already started")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.running, b.stop = true, cancel
	b.wg.Add(2)
	go func() {
		defer b.wg.Done()
		b.pollLoop(runCtx)
	}()
	go func() {
		defer b.wg.Done()
		b.watch.run(runCtx)
	}()
	return nil
}

// Stop stops dispatching and waits for the attempts running to end, or for ctx. An attempt cut
// short is retried when its claim runs out.
func (b *Bus) Stop(ctx context.Context) error {
	b.runMu.Lock()
	defer b.runMu.Unlock()
	if !b.running {
		return nil
	}
	b.stop()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		b.inflight.Wait()
		close(done)
	}()
	b.running = false
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bus: stop: %w", ctx.Err())
	}
}
