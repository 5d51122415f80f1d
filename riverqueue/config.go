package riverqueue

import (
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// Config tunes the River client behind a Queue. A nil *Config, and every zero field, means the
// default written at the end of the field's comment.
type Config struct {
	// FetchCooldown is the least time between two fetches of one lane; it bounds throughput.
	// Default: 2 ms.
	FetchCooldown time.Duration
	// FirstPollInterval is how often the first-attempt lane looks for new jobs. A job inserted in
	// another transaction is otherwise noticed through River's notification poll (every 50 ms on
	// SQLite), so this bounds the time from a Send's commit to its first attempt. Each poll costs
	// CPU even when idle. Default: 20 ms.
	FirstPollInterval time.Duration
	// PollInterval is how often the retry and manual lanes look for jobs that became due. A retry
	// is inserted ahead of its NotBefore and held in its worker for the last stretch, so its
	// precision does not depend on this; snoozes and River's own retries do. Default: 100 ms.
	PollInterval time.Duration
}

// Defaults of Config. DefaultJobTimeout is hookd.DefaultJobTimeout.
const (
	DefaultFetchCooldown     = 2 * time.Millisecond
	DefaultFirstPollInterval = 20 * time.Millisecond
	DefaultPollInterval      = 100 * time.Millisecond
	DefaultJobTimeout        = hookd.DefaultJobTimeout
)

// withDefaults returns a copy of c with every zero field set to its default.
func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.FetchCooldown == 0 {
		out.FetchCooldown = DefaultFetchCooldown
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
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"FetchCooldown", c.FetchCooldown},
		{"FirstPollInterval", c.FirstPollInterval},
		{"PollInterval", c.PollInterval},
	} {
		if f.d < 0 {
			return invalid("Config."+f.name, fmt.Sprintf("is %s; use a positive duration, or zero for the default", f.d))
		}
	}
	if c.FirstPollInterval < c.FetchCooldown {
		return invalid("Config.FirstPollInterval", fmt.Sprintf("is %s, below FetchCooldown %s; raise it or lower FetchCooldown", c.FirstPollInterval, c.FetchCooldown))
	}
	if c.PollInterval < c.FetchCooldown {
		return invalid("Config.PollInterval", fmt.Sprintf("is %s, below FetchCooldown %s; raise it or lower FetchCooldown", c.PollInterval, c.FetchCooldown))
	}
	return nil
}

// queueSettings is a hookd.QueueConfig with its defaults applied and checked.
type queueSettings struct {
	workers    map[hookd.Lane]int
	jobTimeout time.Duration
}

// resolveQueueConfig applies the defaults documented on hookd.QueueConfig and checks the result.
func resolveQueueConfig(qc *hookd.QueueConfig) (queueSettings, error) {
	workers, timeout, err := qc.Resolve()
	if err != nil {
		return queueSettings{}, fmt.Errorf("riverqueue: %w", err)
	}
	return queueSettings{workers: workers, jobTimeout: timeout}, nil
}

func invalid(field, reason string) error {
	return fmt.Errorf("riverqueue: %w", &hookd.ValidationError{Field: field, Reason: reason})
}
