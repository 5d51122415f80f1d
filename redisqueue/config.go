package redisqueue

import (
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/hookd/hookd"
)

// Config tunes a Queue. A nil *Config is invalid (Namespace is required); every zero field other
// than Namespace means the default written at the end of the field's comment.
type Config struct {
	// Logger receives the queue's records (a failed after-commit enqueue, a failed handler, a
	// sweep that found stranded deliveries) and asynq's, at Warn and above unless the logger is
	// enabled at Debug. Default: slog.Default().
	Logger *slog.Logger
	// Namespace names this installation's queues in Redis: every asynq queue is
	// "<Namespace>:first", "<Namespace>:retry" or "<Namespace>:manual". asynq has no key prefix, so
	// the namespace is what keeps two installations sharing one Redis apart. 1 to 64 characters
	// of A-Z, a-z, 0-9, '_', '.' and '-'. Required.
	Namespace string
	// SweepInterval is how often the sweeper runs while the queue is started (it also runs once
	// at Start). Default: half of SweepAfter (after its own default), at most
	// DefaultSweepInterval (30 s, the interval for the default SweepAfter of 1 min), so that a
	// stranded delivery is enqueued again between SweepAfter and 1.5 times SweepAfter past due.
	SweepInterval time.Duration
	// SweepAfter is how long past due a pending delivery must be before the sweeper enqueues it:
	// a delivery whose enqueue never happened (a crash between commit and enqueue, a transaction
	// committed by the app, Redis restarted empty). A zero SweepInterval follows it (see
	// SweepInterval). Default: 1 min.
	SweepAfter time.Duration
	// ForwardInterval is how often asynq moves scheduled and retried tasks that became due to
	// their queue (asynq's DelayedTaskCheckInterval). Default: 50 ms.
	ForwardInterval time.Duration
	// FirstPollInterval is how long the first-attempt lane, when its queue was empty, waits on
	// average before it looks again (asynq's TaskCheckInterval: asynq polls, and its own default
	// of 1 s would delay a first attempt by up to 1.5 s). It bounds the time from a Send's commit
	// to the first attempt: a job waits for the rest of the lane's current wait, at most 1.5 times
	// this. Each poll is one Redis call. Default: 5 ms (measured: B3 p50 through PostgreSQL and
	// Redis 5.5-6.2 ms against 10.3-10.8 ms at 10 ms; an idle process costs about 8 % of a core
	// either way).
	FirstPollInterval time.Duration
	// PollInterval is FirstPollInterval for the retry and manual lanes. A retry is scheduled ahead
	// of its NotBefore and held for the last stretch, so its precision does not depend on this; a
	// snooze's end and a manual attempt's start do. Default: 20 ms.
	PollInterval time.Duration
}

// Defaults of Config.
const (
	DefaultSweepInterval     = 30 * time.Second
	DefaultSweepAfter        = time.Minute
	DefaultForwardInterval   = 50 * time.Millisecond
	DefaultFirstPollInterval = 5 * time.Millisecond
	DefaultPollInterval      = 20 * time.Millisecond
)

// namespacePattern is what Config.Namespace accepts.
var namespacePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// withDefaults returns a copy of c with every zero field but Namespace set to its default
// (SweepInterval's derived from SweepAfter's).
func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	if out.SweepAfter == 0 {
		out.SweepAfter = DefaultSweepAfter
	}
	if out.SweepInterval == 0 {
		// Every half of SweepAfter, at most every DefaultSweepInterval, never zero (a SweepAfter
		// of 1 ns). A negative SweepAfter keeps the default here and fails validate.
		out.SweepInterval = DefaultSweepInterval
		if out.SweepAfter > 0 {
			out.SweepInterval = max(min(out.SweepAfter/2, DefaultSweepInterval), time.Nanosecond)
		}
	}
	if out.ForwardInterval == 0 {
		out.ForwardInterval = DefaultForwardInterval
	}
	if out.FirstPollInterval == 0 {
		out.FirstPollInterval = DefaultFirstPollInterval
	}
	if out.PollInterval == 0 {
		out.PollInterval = DefaultPollInterval
	}
	return out
}

// validate checks a Config that has its defaults.
func (c Config) validate() error {
	if !namespacePattern.MatchString(c.Namespace) {
		return invalid("Config.Namespace", fmt.Sprintf("is %q; use 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-', one per installation sharing the Redis", c.Namespace))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"SweepInterval", c.SweepInterval},
		{"SweepAfter", c.SweepAfter},
		{"ForwardInterval", c.ForwardInterval},
		{"FirstPollInterval", c.FirstPollInterval},
		{"PollInterval", c.PollInterval},
	} {
		if f.d < 0 {
			return invalid("Config."+f.name, fmt.Sprintf("is %s; use a positive duration, or zero for the default", f.d))
		}
	}
	return nil
}

// pollInterval returns the poll interval of lane l.
func (c Config) pollInterval(l hookd.Lane) time.Duration {
	if l == hookd.LaneFirst {
		return c.FirstPollInterval
	}
	return c.PollInterval
}

func invalid(field, reason string) error {
	return fmt.Errorf("redisqueue: %w", &hookd.ValidationError{Field: field, Reason: reason})
}
