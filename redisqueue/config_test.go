package redisqueue

import (
	"strings"
	"testing"
	"time"
)

// TestConfigDefaultSweepInterval pins how often the sweeper runs for a SweepAfter when
// SweepInterval is zero: every half of it, at most every 30 s. An explicit SweepInterval is kept.
func TestConfigDefaultSweepInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ after, want time.Duration }{
		{time.Second, 500 * time.Millisecond},
		{2 * time.Second, time.Second},
		{time.Minute, 30 * time.Second}, // the default SweepAfter: DefaultSweepInterval
		{10 * time.Minute, 30 * time.Second},
	} {
		c := &Config{SweepAfter: tc.after}
		if got := c.withDefaults().SweepInterval; got != tc.want {
			t.Errorf("SweepInterval for SweepAfter %s = %s, want %s", tc.after, got, tc.want)
		}
	}
	if got := (*Config)(nil).withDefaults(); got.SweepAfter != DefaultSweepAfter || got.SweepInterval != DefaultSweepInterval {
		t.Errorf("nil Config: SweepAfter %s, SweepInterval %s; want %s, %s", got.SweepAfter, got.SweepInterval, DefaultSweepAfter, DefaultSweepInterval)
	}
	if got := (&Config{SweepAfter: 2 * time.Second, SweepInterval: 5 * time.Second}).withDefaults().SweepInterval; got != 5*time.Second {
		t.Errorf("explicit SweepInterval 5s became %s", got)
	}
	if got := (&Config{SweepAfter: time.Nanosecond}).withDefaults().SweepInterval; got <= 0 {
		t.Errorf("SweepInterval for SweepAfter 1ns = %s, want positive", got)
	}
	c := (&Config{Namespace: "hookd", SweepAfter: -time.Second}).withDefaults()
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "Config.SweepAfter") {
		t.Errorf("negative SweepAfter: validate = %v, want a Config.SweepAfter error", err)
	}
}
