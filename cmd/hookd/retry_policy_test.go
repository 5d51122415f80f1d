package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRetryPolicyCommands sets an endpoint's and an application's retry policy from the CLI:
// endpoint add and update, app update, shown by get, and the flags' and the server's refusals.
// The test server's schedule is 20 ms, 40 ms; its --max-timeout the default 30 s.
func TestRetryPolicyCommands(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")

	type policy struct {
		ID             string
		RetrySchedule  []float64
		TimeoutSeconds *float64
	}
	var ep policy
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/p"), "--uid", "p",
		"--retry-schedule", "10ms,40ms", "--attempt-timeout", "10s")
	if ep.ID == "" || !reflect.DeepEqual(ep.RetrySchedule, []float64{0.01, 0.04}) || ep.TimeoutSeconds == nil || *ep.TimeoutSeconds != 10 {
		t.Fatalf("endpoint add --json: %+v", ep)
	}
	out := b.ok(t, "", "endpoint", "get", "acme", "p")
	if !strings.Contains(out, "10ms,40ms") || !strings.Contains(out, "10s") {
		t.Errorf("endpoint get does not show the policy:\n%s", out)
	}

	b.ok(t, "", "endpoint", "update", "acme", "p", "--retry-schedule", "none", "--attempt-timeout", "inherit")
	var got policy
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "p")
	if got.RetrySchedule == nil || len(got.RetrySchedule) != 0 || got.TimeoutSeconds != nil {
		t.Errorf("after update none / inherit: %+v", got)
	}
	b.ok(t, "", "endpoint", "update", "acme", "p", "--description", "kept")
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "p")
	if got.RetrySchedule == nil || len(got.RetrySchedule) != 0 {
		t.Errorf("an update without the flags changed the schedule: %+v", got)
	}

	var app policy
	b.okJSON(t, &app, "", "app", "update", "acme", "--retry-schedule", "20ms", "--attempt-timeout", "5s")
	if !reflect.DeepEqual(app.RetrySchedule, []float64{0.02}) || app.TimeoutSeconds == nil || *app.TimeoutSeconds != 5 {
		t.Errorf("app update --json: %+v", app)
	}
	if out := b.ok(t, "", "app", "get", "acme"); !strings.Contains(out, "20ms") || !strings.Contains(out, "5s") {
		t.Errorf("app get does not show the policy:\n%s", out)
	}

	// A value that is not a duration is a usage error before any request; the server's bounds
	// come back as its 422, naming the field.
	for _, args := range [][]string{
		{"endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/x"), "--retry-schedule", "5x"},
		{"endpoint", "update", "acme", "p", "--attempt-timeout", "-1s"},
		{"app", "update", "acme", "--retry-schedule", "1s,,2s"},
	} {
		if r := b.cli(t, "", args...); r.code != exitUsage || !strings.Contains(r.stderr, "--") {
			t.Errorf("hookd %s: exit %d, stderr %q; want a usage error", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"endpoint", "update", "acme", "p", "--retry-schedule", "1h"}, "retrySchedule"},
		{[]string{"endpoint", "update", "acme", "p", "--retry-schedule", "10ms,10ms,10ms"}, "at most 2"},
		{[]string{"app", "update", "acme", "--attempt-timeout", "1m"}, "timeoutSeconds"},
	} {
		if r := b.cli(t, "", tc.args...); r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("hookd %s: exit %d, stderr %q; want a failure naming %s", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
}

// --max-timeout (or HOOKD_MAX_TIMEOUT) defaults to 30s and is never below --timeout; a value that
// is not a duration above zero is a usage error.
func TestServeMaxTimeout(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{nil, nil, 30 * time.Second},
		{[]string{"--max-timeout", "2m"}, nil, 2 * time.Minute},
		{nil, map[string]string{"HOOKD_MAX_TIMEOUT": "45s"}, 45 * time.Second},
		{[]string{"--timeout", "1m"}, nil, time.Minute},
	} {
		lookup := noEnv
		if tc.env != nil {
			lookup = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		}
		c, err := parseServeConfig(quietEnv(), tc.args, lookup)
		if err != nil {
			t.Fatalf("serve %q %v: %v", tc.args, tc.env, err)
		}
		if got := c.longestAttempt(); got != tc.want {
			t.Errorf("serve %q %v: longest attempt %v, want %v", tc.args, tc.env, got, tc.want)
		}
	}
	for _, v := range []string{"0s", "-1s", "soon"} {
		_, err := parseServeConfig(quietEnv(), []string{"--max-timeout", v}, noEnv)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "max-timeout") {
			t.Errorf("serve --max-timeout %s: %v, want a usage error naming the flag", v, err)
		}
	}
}
