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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// Event is a domain event to publish.
type Event struct {
	// Name is the event's internal name, e.g. "tenancy.invitation.created".
	Name string
	// AggregateID names what the event is about (an invitation's id); optional.
	AggregateID string
	// Payload is marshalled to JSON at Publish.
	Payload any
	// OccurredAt defaults to the bus's clock at Publish.
	OccurredAt time.Time
}

// Delivery is an event as a handler gets it.
type Delivery struct {
	ID          string
	Name        string
	AggregateID string
	// Payload is the JSON marshalled at Publish, byte for byte.
	Payload    json.RawMessage
	OccurredAt time.Time
	// Attempt counts this event's attempts, from 1.
	Attempt int
}

// Handler handles one event. It must be idempotent: it may run more than once for one event.
type Handler func(ctx context.Context, d *Delivery) error

// Config configures a Bus. A nil *Config means every default.
type Config struct {
	// Logger receives failed attempts and dead letters. Default: discard.
	Logger *slog.Logger
	// OnError is called after each failed attempt of an event (dead is true when it was the last):
	// the hook that pages someone. It must not block.
	OnError func(d *Delivery, err error, dead bool)
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

type namedHandler struct {
	name string
	h    Handler
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

// Subscribe adds handler h for the events named name. An event's handlers run one after another,
// in the order they were added; errors name a handler by that order ("handler 2 of
// tenancy.invitation.created").
func (b *Bus) Subscribe(name string, h Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	label := fmt.Sprintf("handler %d of %s", len(b.handlers[name])+1, name)
	b.handlers[name] = append(b.handlers[name], namedHandler{name: label, h: h})
}

// maxPayload bounds one event's payload.
const maxPayload = 1 << 20

// Publish writes events to the outbox in tx, the caller's transaction: a *sql.Tx on the store's
// database (on PostgreSQL through pgx's database/sql driver), a pgx.Tx on PostgreSQL, or a
// hookd.Tx of the store. Nothing is dispatched unless tx commits. An event that cannot be
// written (a payload that is not JSON, a name that is empty) fails Publish before anything is
// written.
func (b *Bus) Publish(ctx context.Context, tx any, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	now := b.cfg.Now().UTC()
	recs := make([]Record, len(events))
	for i, e := range events {
		if e.Name == "" {
			return fmt.Errorf("bus: publish: event %d: %w", i, &hookd.ValidationError{Field: "Name", Reason: "is empty; name the event, e.g. tenancy.invitation.created"})
		}
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			return fmt.Errorf("bus: publish %s: %w", e.Name, &hookd.ValidationError{Field: "Payload", Reason: "does not marshal to JSON: " + err.Error()})
		}
		if len(payload) > maxPayload {
			return fmt.Errorf("bus: publish %s: %w", e.Name, &hookd.ValidationError{Field: "Payload", Reason: fmt.Sprintf("is %d bytes as JSON, at most %d", len(payload), maxPayload)})
		}
		occurred := e.OccurredAt
		if occurred.IsZero() {
			occurred = now
		}
		recs[i] = Record{ID: newEventID(), Name: e.Name, AggregateID: e.AggregateID, Payload: payload,
			OccurredAt: occurred.UTC(), Status: StatusPending, NextAttempt: now, CreatedAt: now, UpdatedAt: now}
	}
	if err := b.out.InsertEvents(ctx, tx, recs); err != nil {
		return fmt.Errorf("bus: publish: %w", err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	if ac, ok := tx.(hookd.AfterCommitter); ok && ac.AfterCommit(func() { b.watch.committed(ids) }) {
		return nil
	}
	b.watch.add(ids)
	return nil
}

func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
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

// Poll dispatches the events due now, as the poll does every interval, and returns once they are
// settled. Tests with an injected clock call it after moving the clock.
func (b *Bus) Poll(ctx context.Context) error {
	for {
		due, err := b.out.DueEvents(ctx, b.cfg.Now(), pollBatch)
		if err != nil {
			return fmt.Errorf("bus: poll: %w", err)
		}
		var wg sync.WaitGroup
		for _, r := range due {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.dispatch(ctx, r)
			}()
		}
		wg.Wait()
		if len(due) < pollBatch {
			return nil
		}
	}
}

// pollBatch bounds the events one poll dispatches at once.
const pollBatch = 100

func (b *Bus) pollLoop(ctx context.Context) {
	t := time.NewTicker(b.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := b.Poll(ctx); err != nil && ctx.Err() == nil {
			b.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "hookd bus: poll failed", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.kick:
		}
	}
}

// Failed returns up to limit dead-lettered events, in id order after the id after ("": from the
// first).
func (b *Bus) Failed(ctx context.Context, after string, limit int) ([]Record, error) {
	if limit <= 0 || limit > 1000 {
		return nil, fmt.Errorf("bus: failed: %w", &hookd.ValidationError{Field: "limit", Reason: fmt.Sprintf("is %d; use 1 to 1000", limit)})
	}
	out, err := b.out.ListEvents(ctx, StatusFailed, after, limit)
	if err != nil {
		return nil, fmt.Errorf("bus: failed: %w", err)
	}
	return out, nil
}

// Redrive makes a dead-lettered event pending again, with its attempts counted from zero, and
// dispatches it at the next poll. An id that names no failed event is hookd.ErrNotFound.
func (b *Bus) Redrive(ctx context.Context, id string) error {
	if err := b.out.RedriveEvent(ctx, id, b.cfg.Now()); err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
	return nil
}

// dispatch claims the next attempt of r and runs its handlers, then settles the attempt. It
// returns quietly when another process took the attempt.
func (b *Bus) dispatch(ctx context.Context, r Record) {
	now := b.cfg.Now()
	claimed, err := b.out.ClaimEvent(ctx, r.ID, r.Attempts, now.Add(b.cfg.HandlerTimeout+leaseGrace), now)
	if err != nil {
		if ctx.Err() == nil {
			b.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "hookd bus: claim failed", slog.String("event", r.ID), slog.String("error", err.Error()))
		}
		return
	}
	if !claimed {
		return
	}
	d := &Delivery{ID: r.ID, Name: r.Name, AggregateID: r.AggregateID, Payload: json.RawMessage(r.Payload), OccurredAt: r.OccurredAt, Attempt: r.Attempts + 1}
	herr := b.run(ctx, d)
	if ctx.Err() != nil && herr != nil {
		return // stopped: the claim runs out and the attempt is made again
	}
	st := Settlement{ID: r.ID, Attempts: d.Attempt, At: b.cfg.Now()}
	switch {
	case herr == nil:
		st.Done = true
	case d.Attempt >= b.cfg.MaxAttempts:
		st.Status, st.NextAttempt, st.LastError = StatusFailed, st.At, sqlcodec.Text(herr.Error(), 2000)
	default:
		st.Status, st.NextAttempt, st.LastError = StatusPending, st.At.Add(b.backoff(d.Attempt)), sqlcodec.Text(herr.Error(), 2000)
	}
	if herr != nil {
		dead := st.Status == StatusFailed
		level, msg := slog.LevelWarn, "hookd bus: event failed; retrying"
		if dead {
			level, msg = slog.LevelError, "hookd bus: event failed every attempt; dead-lettered"
		}
		b.cfg.Logger.LogAttrs(ctx, level, msg, slog.String("event", d.ID), slog.String("name", d.Name),
			slog.Int("attempt", d.Attempt), slog.String("error", herr.Error()))
		if b.cfg.OnError != nil {
			b.cfg.OnError(d, herr, dead)
		}
	}
	if err := b.out.SettleEvent(context.WithoutCancel(ctx), st); err != nil {
		b.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "hookd bus: recording an attempt failed; it is made again when its claim runs out",
			slog.String("event", d.ID), slog.String("error", err.Error()))
	}
}

// leaseGrace is added to HandlerTimeout to make a claim's lease.
const leaseGrace = 30 * time.Second

// backoff is the wait after the n-th failed attempt.
func (b *Bus) backoff(n int) time.Duration {
	s := b.cfg.Backoff
	return s[min(n, len(s))-1]
}

// run runs every handler of d's name, each to the end, and returns their errors joined.
func (b *Bus) run(ctx context.Context, d *Delivery) error {
	b.mu.RLock()
	hs := b.handlers[d.Name]
	b.mu.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, b.cfg.HandlerTimeout)
	defer cancel()
	var errs []error
	for _, h := range hs {
		if err := call(ctx, h.h, d); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h.name, err))
		}
	}
	return errors.Join(errs...)
}

// call runs h, turning a panic into an error.
func call(ctx context.Context, h Handler, d *Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, d)
}
