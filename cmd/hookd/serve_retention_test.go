package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// --retention keeps 90 days by default, takes days, durations and none, and refuses less than a
// day with exit 2.
func TestServeRetentionFlag(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*serveConfig, error) {
		return parseServeConfig(quietEnv(), args, func(string) (string, bool) { return "", false })
	}
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 90 * 24 * time.Hour},
		{[]string{"--retention", "7d"}, 7 * 24 * time.Hour},
		{[]string{"--retention", "36h"}, 36 * time.Hour},
		{[]string{"--retention", "none"}, 0},
	} {
		got, err := parse(c.args...)
		if err != nil || got.retention != c.want {
			t.Errorf("serve %q: retention %v, %v; want %v", c.args, got, err, c.want)
		}
	}
	for _, v := range []string{"0d", "23h", "1.5d", "-3d", "forever", "0"} {
		_, err := parse("--retention", v)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "at least 1 (e.g. 90d)") {
			t.Errorf("--retention %q: %v; want exit 2 saying what it accepts", v, err)
		}
	}
	c, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		return map[string]string{"HOOKD_RETENTION": "30d"}[k], k == "HOOKD_RETENTION"
	})
	if err != nil || c.retention != 30*24*time.Hour {
		t.Fatalf("HOOKD_RETENTION=30d: %v, %v", c, err)
	}
}
