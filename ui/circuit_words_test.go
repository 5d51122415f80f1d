package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestCircuitInWords: an endpoint's circuit reads as a customer says it, never "circuit open".
func TestCircuitInWords(t *testing.T) {
	t.Parallel()
	tmpl, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(10 * time.Minute).UTC()
	// The time of day, with the date when ten minutes from now is tomorrow (UTC).
	soonLayout := "15:04"
	if soon.Format(time.DateOnly) != time.Now().UTC().Format(time.DateOnly) {
		soonLayout = "Jan 2 15:04"
	}
	tests := []struct {
		name  string
		state hookd.CircuitState
		want  string
	}{
		{"closed", hookd.CircuitState{}, `<span class="good">enabled</span>`},
		{"paused", hookd.CircuitState{Open: true, Failures: 10, Until: soon},
			`<span class="warn">paused after 10 failures</span>, next try at ` + soon.Format(soonLayout) + ` UTC`},
		{"one failure", hookd.CircuitState{Open: true, Failures: 1, Until: soon}, `paused after 1 failure</span>`},
		{"probing", hookd.CircuitState{Open: true, Failures: 3, Until: time.Now().Add(-time.Second)}, `trying again now`},
	}
	for _, tc := range tests {
		var b strings.Builder
		if err := tmpl.ExecuteTemplate(&b, "circuit", tc.state); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "circuit") {
			t.Errorf("%s: %q; want %q", tc.name, b.String(), tc.want)
		}
	}
	if got := said(0, "circuit open: not sent"); got != "not sent: endpoint paused after repeated failures" {
		t.Errorf("a try not sent reads %q", got)
	}
	if got := said(500, "HTTP 500"); got != "HTTP 500" {
		t.Errorf("HTTP 500 reads %q", got)
	}
	if got := said(0, "connection refused"); got != "connection refused" {
		t.Errorf("a refused connection reads %q", got)
	}
}
