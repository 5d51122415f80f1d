// Package outage logs the failures of hookd's loops that retry (a queue's fetch, the attempt
// recorder, a sweeper) without a line for each retry: one line when a cause starts failing, a
// summary every 30 s while it lasts with how many times it failed, and one line when it ends.
// It also keeps what it saw for the health checks: which causes fail now, since when, and the
// last error.
//
// A Log holds the settings; each loop takes a Cause of it by name and reports each try to it:
// Fail with the error, OK on success. A cause's outage begins with its first failure and ends
// once it has succeeded and Quiet has passed since its last failure, so a cause that fails and
// succeeds by turns (a database coming back) does not log a line for each turn.
//
// The lines, each with the attribute cause:
//
//	WARN "hookd outage began"      error, and the attributes the first failure gave
//	WARN "hookd outage continues"  failures (since the last line), total, lasting, error (the last)
//	INFO "hookd outage ended"      failures (in all), lasted
package outage

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	// DefaultEvery is the least time between two lines of one outage.
	DefaultEvery = 30 * time.Second
	// DefaultQuiet is how long after its last failure a success ends an outage.
	DefaultQuiet = 2 * time.Second
)

// maxErr bounds the error text a line carries: a driver's error can quote a whole statement.
const maxErr = 500

// Config configures a Log. Zero fields mean the defaults.
type Config struct {
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Every is the least time between two lines of one outage: its summaries come this far apart
	// at most once each. Default: DefaultEvery (30 s).
	Every time.Duration
	// Quiet is how long after its last failure a success ends an outage. Default: DefaultQuiet
	// (2 s).
	Quiet time.Duration
}

// Log writes the lines of its causes' outages to a logger. It is safe for concurrent use.
type Log struct {
	logger *slog.Logger
	now    func() time.Time
	every  time.Duration
	quiet  time.Duration

	mu     sync.Mutex
	causes map[string]*Cause
	order  []*Cause
}

// New returns a Log writing to logger (nil: discard).
func New(logger *slog.Logger, cfg *Config) *Log {
	l := &Log{logger: logger, now: time.Now, every: DefaultEvery, quiet: DefaultQuiet, causes: map[string]*Cause{}}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if cfg != nil {
		if cfg.Now != nil {
			l.now = cfg.Now
		}
		if cfg.Every > 0 {
			l.every = cfg.Every
		}
		if cfg.Quiet > 0 {
			l.quiet = cfg.Quiet
		}
	}
	return l
}

// Cause returns the cause called name, made on first use: what fails, in a few words ("queue:
// fetch jobs"), the value of the lines' cause attribute.
func (l *Log) Cause(name string) *Cause {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.causes[name]; ok {
		return c
	}
	c := &Cause{log: l, name: name}
	l.causes[name] = c
	l.order = append(l.order, c)
	return c
}

// OK reports a success of every cause of the log, for causes whose loops tell no success of
// their own (a library's log lines, passed through Fail) when something else shows their
// dependency back.
func (l *Log) OK() {
	l.mu.Lock()
	causes := l.order
	l.mu.Unlock()
	for _, c := range causes {
		c.OK()
	}
}

// Len returns how many causes the log has made.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.order)
}

// Failing returns the state of every cause whose outage goes on, in the order the causes were
// made.
func (l *Log) Failing() []State {
	l.mu.Lock()
	causes := l.order
	l.mu.Unlock()
	var out []State
	for _, c := range causes {
		if s, ok := c.State(); ok {
			out = append(out, s)
		}
	}
	return out
}

// State is a cause's outage as it stands.
type State struct {
	Cause string
	// Since is the first failure of the outage, Last the latest.
	Since, Last time.Time
	// Failures counts the failures of the outage.
	Failures int
	// Err is the text of the latest failure's error.
	Err string
}

// Cause is one thing that fails and is tried again. It is safe for concurrent use.
type Cause struct {
	log  *Log
	name string
	// failing is true during an outage: OK reads it alone when there is none, which is most of
	// the time, and is called on every success of a busy loop.
	failing atomic.Bool

	mu       sync.Mutex
	since    time.Time // the outage's first failure
	last     time.Time // its latest failure
	lastLine time.Time // its latest line
	count    int       // failures since lastLine
	total    int       // failures of the outage
	err      string    // the latest failure's error
	// recovered is the first success since the latest failure; zero: none yet.
	recovered time.Time
}

// Name is the cause's name.
func (c *Cause) Name() string { return c.name }

// Fail reports a failure with err (nil counts as an error "unknown"). The first failure of an
// outage logs its line, with attrs; a later one logs a summary when Every has passed since the
// outage's last line.
func (c *Cause) Fail(err error, attrs ...slog.Attr) {
	msg := "unknown"
	if err != nil {
		msg = err.Error()
	}
	if len(msg) > maxErr {
		msg = strings.ToValidUTF8(msg[:maxErr], "") + "…"
	}
	l := c.log
	c.mu.Lock()
	now := l.now()
	c.last, c.err, c.recovered = now, msg, time.Time{}
	c.count++
	c.total++
	if !c.failing.Load() {
		c.since, c.lastLine, c.count, c.total = now, now, 0, 1
		c.failing.Store(true)
		c.mu.Unlock()
		l.logger.LogAttrs(context.Background(), slog.LevelWarn, "hookd outage began",
			append([]slog.Attr{slog.String("cause", c.name), slog.String("error", msg)}, attrs...)...)
		return
	}
	if now.Sub(c.lastLine) < l.every {
		c.mu.Unlock()
		return
	}
	n, total, since := c.count, c.total, c.since
	c.lastLine, c.count = now, 0
	c.mu.Unlock()
	l.logger.LogAttrs(context.Background(), slog.LevelWarn, "hookd outage continues",
		slog.String("cause", c.name), slog.Int("failures", n), slog.Int("total", total),
		slog.Duration("lasting", now.Sub(since).Round(time.Millisecond)), slog.String("error", msg))
}

// OK reports a success. It ends the outage, with its line, once Quiet has passed since the
// outage's last failure; an earlier success leaves the outage on, to end Quiet after the last
// failure (by a timer, or the next call of the cause: OK, State, Recent), unless a failure comes
// first.
func (c *Cause) OK() {
	if !c.failing.Load() {
		return
	}
	c.mu.Lock()
	now := c.log.now()
	if c.failing.Load() && c.recovered.IsZero() {
		c.recovered = now
		if wait := c.log.quiet - now.Sub(c.last); wait > 0 {
			// The end comes without another call: a loop that recovered may not succeed again
			// soon (a listener that reconnected and waits).
			time.AfterFunc(wait, func() {
				c.mu.Lock()
				c.endIfQuiet(c.log.now())
			})
		}
	}
	c.endIfQuiet(now) // unlocks
}

// endIfQuiet ends the outage, with its line, when it has succeeded since its last failure and
// Quiet has passed since that failure. c.mu is held; it unlocks it.
func (c *Cause) endIfQuiet(now time.Time) {
	if !c.failing.Load() || c.recovered.IsZero() || now.Sub(c.last) < c.log.quiet {
		c.mu.Unlock()
		return
	}
	c.failing.Store(false)
	total, lasted := c.total, c.recovered.Sub(c.since)
	c.mu.Unlock()
	c.log.logger.LogAttrs(context.Background(), slog.LevelInfo, "hookd outage ended",
		slog.String("cause", c.name), slog.Int("failures", total), slog.Duration("lasted", lasted.Round(time.Millisecond)))
}

// State returns the cause's outage, and false when none goes on. It ends an outage that has
// succeeded since its last failure, Quiet ago or more (see OK).
func (c *Cause) State() (State, bool) {
	if !c.failing.Load() {
		return State{}, false
	}
	c.mu.Lock()
	c.endIfQuiet(c.log.now())
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.failing.Load() {
		return State{}, false
	}
	return State{Cause: c.name, Since: c.since, Last: c.last, Failures: c.total, Err: c.err}, true
}

// Recent returns the cause's outage when its last failure came within window, and false when
// none does: a cause that fails only when it is used (a write that comes with traffic) is not
// held failing by a failure long past.
func (c *Cause) Recent(window time.Duration) (State, bool) {
	s, ok := c.State()
	if !ok || c.log.now().Sub(s.Last) > window {
		return State{}, false
	}
	return s, true
}
