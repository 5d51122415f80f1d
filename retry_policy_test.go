package hookd_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// An endpoint's own schedule, else its application's, else the server's decides how many
// attempts a failing delivery gets and when the next one is due.
func TestRetryPolicyPerEndpoint(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RetrySchedule = []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}
	cfg.Jitter = -1
	b := setup(t, cfg)
	ms := time.Millisecond
	if _, err := b.client.UpdateApplication(b.ctx, b.app.ID, &hookd.ApplicationIn{
		Name: b.app.Name, UID: b.app.UID, RetrySchedule: []time.Duration{10 * ms},
	}); err != nil {
		t.Fatal(err)
	}
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	own := b.endpoint(t, "/own", failing, &hookd.EndpointIn{RetrySchedule: []time.Duration{10 * ms, 10 * ms}})
	inherits := b.endpoint(t, "/inherits", failing, nil)
	longer := b.endpoint(t, "/longer", failing, &hookd.EndpointIn{RetrySchedule: []time.Duration{10 * ms, 10 * ms, 10 * ms}})
	none := b.endpoint(t, "/none", failing, &hookd.EndpointIn{RetrySchedule: []time.Duration{}})
	slow := b.endpoint(t, "/slow", failing, &hookd.EndpointIn{RetrySchedule: []time.Duration{30 * time.Minute}})

	sent := time.Now()
	msg := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"}).Message.ID
	for _, tc := range []struct {
		name string
		ep   *hookd.Endpoint
		want int
	}{
		{"the endpoint's schedule", own, 3},
		{"the application's schedule", inherits, 2},
		{"the endpoint's over the application's", longer, 4},
		{"an empty schedule: no retries", none, 1},
	} {
		b.waitStatus(t, msg, tc.ep.ID, hookd.DeliveryFailed)
		if n := len(b.attempts(t, msg, tc.ep.ID)); n != tc.want {
			t.Errorf("%s: %d attempts, want %d", tc.name, n, tc.want)
		}
	}
	b.waitAttempts(t, msg, slow.ID, 1)
	d := b.waitStatus(t, msg, slow.ID, hookd.DeliveryPending)
	if d.NextAttemptAt == nil || d.NextAttemptAt.Before(sent.Add(29*time.Minute)) || d.NextAttemptAt.After(time.Now().Add(31*time.Minute)) {
		t.Errorf("next attempt at %v, want 30 min after the first attempt (the endpoint's schedule, not the server's hour)", d.NextAttemptAt)
	}
}

// An attempt ends at the endpoint's timeout, or its application's, though the server's is longer.
func TestRetryPolicyAttemptTimeout(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Delivery.Timeout = 5 * time.Second
	cfg.RetrySchedule = []time.Duration{time.Hour}
	b := setup(t, cfg)
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ep := b.endpoint(t, "/hang", hang, &hookd.EndpointIn{AttemptTimeout: 200 * time.Millisecond})
	app2, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Beta", UID: "beta", AttemptTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b.recv.Handle("/hang2", hang)
	ep2, err := b.client.CreateEndpoint(b.ctx, app2.ID, &hookd.EndpointIn{URL: b.recv.URL("/hang2")})
	if err != nil {
		t.Fatal(err)
	}

	msg := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"}).Message.ID
	msg2, err := b.client.Send(b.ctx, "beta", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"a": 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		app, msg   string
		ep         string
		want       time.Duration
		wantErrMsg string
	}{
		{"the endpoint's", b.app.ID, msg, ep.ID, 200 * time.Millisecond, "within 200ms"},
		{"the application's", app2.ID, msg2.Message.ID, ep2.ID, 300 * time.Millisecond, "within 300ms"},
	} {
		var as []hookd.Attempt
		deadline := time.Now().Add(20 * time.Second)
		for len(as) == 0 && time.Now().Before(deadline) {
			page, err := b.store.ListAttempts(b.ctx, hookd.AttemptFilter{AppID: tc.app, MessageID: tc.msg, EndpointID: tc.ep, ListOptions: hookd.ListOptions{Limit: 10}})
			if err != nil {
				t.Fatal(err)
			}
			as = page.Data
			time.Sleep(5 * time.Millisecond)
		}
		if len(as) != 1 {
			t.Fatalf("%s: %d attempts, want 1", tc.name, len(as))
		}
		a := as[0]
		if a.Success || !strings.Contains(a.Error, tc.wantErrMsg) {
			t.Errorf("%s: attempt %+v, want a failure %q", tc.name, a, tc.wantErrMsg)
		}
		if a.Duration < tc.want || a.Duration > tc.want+2*time.Second {
			t.Errorf("%s: attempt took %v, want about %v (the server's timeout is 5s)", tc.name, a.Duration, tc.want)
		}
	}
}

func TestCheckRetryPolicy(t *testing.T) {
	t.Parallel()
	cfg := testConfig() // schedule 50, 100, 200 ms; timeout 300 ms
	cfg.MaxTimeout = 2 * time.Second
	b := setup(t, cfg)
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		schedule []time.Duration
		timeout  time.Duration
		field    string // "" when accepted
		reason   string
	}{
		{"inherit", nil, 0, "", ""},
		{"no retries", []time.Duration{}, 0, "", ""},
		{"as long as the server's", []time.Duration{0, 200 * ms, 200 * ms}, 2 * time.Second, "", ""},
		{"too many retries", []time.Duration{ms, ms, ms, ms}, 0, "retrySchedule", "at most 3"},
		{"a wait over the longest", []time.Duration{201 * ms}, 0, "retrySchedule", "at most 200ms"},
		{"a negative wait", []time.Duration{-ms}, 0, "retrySchedule", "zero or positive"},
		{"part of a millisecond", []time.Duration{1500 * time.Microsecond}, 0, "retrySchedule", "whole milliseconds"},
		{"a timeout over the bound", nil, 2*time.Second + ms, "timeoutSeconds", "at most 2s"},
		{"a negative timeout", nil, -time.Second, "timeoutSeconds", "must be positive"},
	} {
		err := b.client.CheckRetryPolicy(tc.schedule, tc.timeout)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		var ve *hookd.ValidationError
		if !errors.Is(err, hookd.ErrInvalid) || !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Reason, tc.reason) {
			t.Errorf("%s: %v, want invalid %s (%q)", tc.name, err, tc.field, tc.reason)
		}
	}
	// CreateEndpoint, UpdateEndpoint and UpdateApplication check it.
	_, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: b.recv.URL("/x"), AttemptTimeout: time.Minute})
	if !errors.Is(err, hookd.ErrInvalid) {
		t.Errorf("CreateEndpoint with a timeout over the bound: %v, want ErrInvalid", err)
	}
	ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: b.recv.URL("/x")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.EditEndpoint(b.ctx, b.app.ID, ep.ID, func(in *hookd.EndpointIn) error {
		in.RetrySchedule = []time.Duration{time.Hour}
		return nil
	})
	if !errors.Is(err, hookd.ErrInvalid) {
		t.Errorf("EditEndpoint with a wait over the bound: %v, want ErrInvalid", err)
	}
	_, err = b.client.UpdateApplication(b.ctx, b.app.ID, &hookd.ApplicationIn{Name: "Acme", RetrySchedule: make([]time.Duration, 4)})
	if !errors.Is(err, hookd.ErrInvalid) {
		t.Errorf("UpdateApplication with too many retries: %v, want ErrInvalid", err)
	}
}

// Config.MaxTimeout is at least the delivery timeout, and the job timeout exceeds it: a config
// that breaks either is refused, naming the field.
func TestConfigMaxTimeoutChecks(t *testing.T) {
	t.Parallel()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for name, tc := range map[string]struct {
		maxTimeout, jobTimeout time.Duration
		want                   string
	}{
		"below the delivery timeout": {100 * time.Millisecond, 0, "Config.MaxTimeout"},
		"job timeout not above it":   {time.Minute, time.Minute, "Config.JobTimeout"},
	} {
		cfg := testConfig() // delivery timeout 300 ms
		cfg.MaxTimeout, cfg.JobTimeout = tc.maxTimeout, tc.jobTimeout
		if _, err := hookd.NewClient(store, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", name, err, tc.want)
		}
	}
	cfg := testConfig()
	cfg.MaxTimeout = time.Minute // the job timeout follows it
	if _, err := hookd.NewClient(store, cfg); err != nil {
		t.Errorf("MaxTimeout 1m with the default job timeout: %v", err)
	}
}
