package delivery

import (
	"math"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]Outcome{
		200: Success, 201: Success, 202: Success, 204: Success, 299: Success,
		410: Gone,
		429: Throttled, 502: Throttled, 504: Throttled,
		300: Redirect, 301: Redirect, 302: Redirect, 303: Redirect, 304: Redirect, 307: Redirect, 308: Redirect, 399: Redirect,
		0: Failure, 100: Failure, 199: Failure, 400: Failure, 401: Failure, 403: Failure, 404: Failure,
		409: Failure, 413: Failure, 500: Failure, 501: Failure, 503: Failure, 599: Failure, 999: Failure, -1: Failure,
	} {
		if got := Classify(status); got != want {
			t.Errorf("Classify(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	for o, want := range map[Outcome]string{
		Success: "success", Gone: "gone", Throttled: "throttled", Redirect: "redirect", Failure: "failure",
		0: "Outcome(0)", 9: "Outcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{" 5 ", 5 * time.Second, true},
		{"00030", 30 * time.Second, true},
		{"99999999999999999999999", time.Duration(math.MaxInt64), true},
		{"9223372037", time.Duration(math.MaxInt64), true},
		{"9223372036", 9223372036 * time.Second, true},
		{"Mon, 30 Nov 2026 12:01:30 GMT", 90 * time.Second, true}, // IMF-fixdate
		{"Monday, 30-Nov-26 13:00:00 GMT", time.Hour, true},       // RFC 850
		{"Mon Nov 30 12:00:10 2026", 10 * time.Second, true},      // ANSI C asctime
		{"Mon, 30 Nov 2026 11:00:00 GMT", 0, true},                // past
		{"Mon, 30 Nov 2026 12:00:00 GMT", 0, true},                // now
		{"", 0, false},
		{"   ", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"5 seconds", 0, false},
		{"2026-11-30T12:01:00Z", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestResultMessage(t *testing.T) {
	t.Parallel()
	var nilResult *Result
	for _, tt := range []struct {
		r    *Result
		want string
	}{
		{nilResult, ""},
		{&Result{Outcome: Success, StatusCode: 200}, ""},
		{&Result{Outcome: Failure, StatusCode: 503}, "HTTP 503"},
		{&Result{Outcome: Gone, StatusCode: 410}, "HTTP 410"},
		{&Result{Outcome: Throttled, StatusCode: 429}, "HTTP 429"},
		{&Result{Outcome: Redirect, StatusCode: 301}, "redirect not followed (HTTP 301)"},
		{&Result{Outcome: Redirect, StatusCode: 302, Location: "https://x.example/"}, "redirect to https://x.example/ not followed (HTTP 302)"},
		{&Result{Outcome: Failure, Err: &transportError{msg: "connection refused"}}, "connection refused"},
	} {
		if got := tt.r.Message(); got != tt.want {
			t.Errorf("%+v.Message() = %q, want %q", tt.r, got, tt.want)
		}
	}
}
