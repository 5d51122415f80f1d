package hookd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Health's bounds. See Client.Health.
const (
	// HealthTimeout bounds each check of Client.Health: a database or a Redis that does not
	// answer within it fails its check.
	HealthTimeout = 3 * time.Second
	// HealthWindow is how recent a failed background write (an attempt's record) must be to fail
	// the database's check: such writes come only with work, so a failure long past does not
	// hold an idle process unhealthy.
	HealthWindow = 5 * time.Second
	// healthProbeEvery is the least time between two write probes: health checks that come
	// closer share the last probe's result, and those that come while a probe runs wait for it.
	healthProbeEvery = time.Second
)

// Health is what Client.Health found. A nil error is a part that works; a failed part's error is
// a *HealthError.
type Health struct {
	// Database fails when a write does not commit within HealthTimeout (a probe, see
	// Client.Health), or when recording an attempt failed on the database within HealthWindow.
	Database error
	// Queue fails when the queue's own server does not answer within HealthTimeout (Redis); a
	// queue that keeps its jobs in the store's database has Database's error.
	Queue error
	// Workers fails when this client's workers make no progress, as the queue tells (a
	// QueueHealthChecker's Workers). Nil when Working is false.
	Workers error
	// Working reports that the client is started: its workers run in this process.
	Working bool
}

// OK reports whether every part works.
func (h Health) OK() bool { return h.Database == nil && h.Queue == nil && h.Workers == nil }

// HealthError is a failed part of a Health: Reason says what fails in a few words that name no
// host, file or user, fit for an unauthenticated health endpoint; Err is the whole error, for
// the log.
type HealthError struct {
	Reason string
	Err    error
}

func (e *HealthError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

func (e *HealthError) Unwrap() error { return e.Err }

// QueueHealth is what a queue tells Client.Health of itself. A nil error is a part that works.
type QueueHealth struct {
	// Separate reports that the queue keeps its jobs outside the store's database (Redis);
	// Backend is then the check of that server.
	Separate bool
	Backend  error
	// Workers says why the workers the queue runs make no progress (fetches or writes of
	// outcomes failing, a fetch that does not return, every slot stuck); nil: they do, or the
	// queue cannot tell.
	Workers error
}

// QueueHealthChecker is a Queue that tells Client.Health of itself: the sqlite and postgres
// stores' own queues and redisqueue are. ctx bounds any call to the queue's server.
type QueueHealthChecker interface {
	QueueHealth(ctx context.Context) QueueHealth
}

// Health checks what the client depends on, each part within HealthTimeout, at once:
//
//   - the database takes writes: a probe commits a write (one row of the idempotency table,
//     expired as it is written, which the next probe deletes), at most once a second however
//     often Health is called; and recording an attempt has not failed on the database within
//     HealthWindow (a full disk can refuse a batch of records while a probe's few bytes fit);
//   - the queue's own server answers, when it is not the database (Redis);
//   - once started, the workers make progress, as the queue tells (QueueHealthChecker).
//
// A probe is one small transaction: on SQLite a few pages appended to the WAL, on PostgreSQL one
// commit and a dead row for autovacuum; at one a second at most, it costs the database little.
// A read is not enough: a full disk or a read-only file still answers reads.
func (c *Client) Health(ctx context.Context) Health {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, HealthTimeout)
	defer cancel()
	var (
		h  = Health{Working: started}
		qh QueueHealth
		wg sync.WaitGroup
	)
	if qc, ok := c.queue.(QueueHealthChecker); ok {
		wg.Go(func() { qh = qc.QueueHealth(ctx) })
	}
	h.Database = c.checkWrites(ctx)
	wg.Wait()
	h.Queue = h.Database
	if qh.Separate {
		h.Queue = qh.Backend
	}
	if started {
		h.Workers = qh.Workers
	}
	return h
}

// checkWrites is Health's database part.
func (c *Client) checkWrites(ctx context.Context) error {
	if s, ok := c.rec.down.Recent(HealthWindow); ok {
		return &HealthError{Reason: "recording attempts fails: database unavailable",
			Err: fmt.Errorf("%s (%d failures since %s)", s.Err, s.Failures, s.Since.UTC().Format(time.RFC3339))}
	}
	if err := c.probe.wait(ctx, c.probeWrite); err != nil {
		reason := "a write failed"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			reason = fmt.Sprintf("a write did not commit within %s", HealthTimeout)
		case errors.Is(err, ErrUnavailable):
			reason = "a write failed: database unavailable"
		}
		return &HealthError{Reason: reason, Err: err}
	}
	return nil
}

// probeWrite commits one write: a row of the idempotency table under a key no request can
// have, expired as it is written. Each write deletes the rows expired before it (the table's own
// purge), so the probes leave one row at most.
func (c *Client) probeWrite(ctx context.Context) error {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	now := time.Now().UTC().Truncate(time.Microsecond)
	return c.store.InTx(ctx, func(tx Tx) error {
		return tx.PutIdempotentResponse(ctx, &IdempotentResponse{
			Key: "hookd.health-probe." + hex.EncodeToString(b), Status: 204, CreatedAt: now, ExpiresAt: now,
		})
	})
}

// healthProbe runs one probe at a time and keeps its result for healthProbeEvery. The zero value
// is ready.
type healthProbe struct {
	mu      sync.Mutex
	at      time.Time     // when the last probe ended
	err     error         // its result
	running chan struct{} // closed when the probe under way ends; nil: none is
}

// wait returns the result of a probe: the last one's when it ended within healthProbeEvery,
// else that of the one under way or of a new one. A probe runs within HealthTimeout whoever
// waits for it; ctx bounds only the wait.
func (p *healthProbe) wait(ctx context.Context, probe func(context.Context) error) error {
	p.mu.Lock()
	if p.running == nil && !p.at.IsZero() && time.Since(p.at) < healthProbeEvery {
		defer p.mu.Unlock()
		return p.err
	}
	if p.running == nil {
		done := make(chan struct{})
		p.running = done
		go func() {
			pctx, cancel := context.WithTimeout(context.Background(), HealthTimeout)
			err := probe(pctx)
			cancel()
			p.mu.Lock()
			p.at, p.err, p.running = time.Now(), err, nil
			p.mu.Unlock()
			close(done)
		}()
	}
	done := p.running
	p.mu.Unlock()
	select {
	case <-done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("no answer within %s: %w", HealthTimeout, ctx.Err())
	}
}
