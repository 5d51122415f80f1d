package main

import (
	"strings"
	"testing"
)

// TestOrderedCommands turns an endpoint's ordered delivery on and off from the CLI: endpoint add
// --ordered, update --ordered=false and --ordered, shown by get; an update without the flag keeps
// it, and a value that is not a boolean is a usage error.
func TestOrderedCommands(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")

	type own struct {
		ID      string
		Ordered bool
	}
	var ep own
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/o"), "--uid", "o", "--ordered")
	if ep.ID == "" || !ep.Ordered {
		t.Fatalf("endpoint add --ordered --json: %+v", ep)
	}
	if out := b.ok(t, "", "endpoint", "get", "acme", "o"); !strings.Contains(out, "ordered") || !strings.Contains(out, "yes") {
		t.Errorf("endpoint get does not show it ordered:\n%s", out)
	}
	b.ok(t, "", "endpoint", "update", "acme", "o", "--description", "kept")
	var got own
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "o")
	if !got.Ordered {
		t.Errorf("an update without --ordered turned it off: %+v", got)
	}
	b.okJSON(t, &got, "", "endpoint", "update", "acme", "o", "--ordered=false")
	if got.Ordered {
		t.Errorf("after --ordered=false: %+v", got)
	}
	b.okJSON(t, &got, "", "endpoint", "update", "acme", "o", "--ordered")
	if !got.Ordered {
		t.Errorf("after --ordered: %+v", got)
	}
	var plain own
	b.okJSON(t, &plain, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/p"))
	if plain.Ordered {
		t.Errorf("endpoint add without --ordered: %+v", plain)
	}
	if r := b.cli(t, "", "endpoint", "update", "acme", "o", "--ordered=maybe"); r.code != exitUsage || !strings.Contains(r.stderr, "ordered") {
		t.Errorf("--ordered=maybe: exit %d, stderr %q; want a usage error naming the flag", r.code, r.stderr)
	}
}
