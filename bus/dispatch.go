package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hookd/hookd/internal/sqlcodec"
)

// Dispatch is one attempt of an event, as its handlers get it.
type Dispatch struct {
	ID          string
	Name        string
	AggregateID string
	// Payload is the JSON marshalled at Publish, byte for byte.
	Payload    json.RawMessage
	OccurredAt time.Time
	// Attempt counts this event's attempts, from 1.
	Attempt int
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
	d := &Dispatch{ID: r.ID, Name: r.Name, AggregateID: r.AggregateID, Payload: json.RawMessage(r.Payload), OccurredAt: r.OccurredAt, Attempt: r.Attempts + 1}
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
func (b *Bus) run(ctx context.Context, d *Dispatch) error {
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
func call(ctx context.Context, h Handler, d *Dispatch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, d)
}
