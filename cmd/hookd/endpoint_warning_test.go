package main

import (
	"strings"
	"testing"
)

// TestEndpointAddNotesGuardedAddress: endpoint add notes on stderr, and still adds the endpoint,
// when its host is or resolves to an address the SSRF guard refuses by default, naming the
// --allow-subnets range under which hookd serve delivers to it; a public address gets no note.
func TestEndpointAddNotesGuardedAddress(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	for _, tc := range []struct {
		url, want string // want "" means no note
	}{
		{"http://127.0.0.1:9/hook", "hookd: note: 127.0.0.1 is a loopback address, which hookd serve refuses by default: unless it was started with --allow-subnets 127.0.0.0/8 (or a range holding it), every attempt to this endpoint fails\n"},
		{"http://localhost:9/hook", "hookd: note: localhost resolves to "},
		{"https://10.0.0.7/hook", "10.0.0.7 is a private address, which hookd serve refuses by default: unless it was started with --allow-subnets 10.0.0.0/8 "},
		{"https://169.254.10.1/hook", "is a link-local address, which hookd serve refuses by default: unless it was started with --allow-subnets 169.254.0.0/16 "},
		{"https://[fd00::1]/hook", "is a unique-local address, which hookd serve refuses by default: unless it was started with --allow-subnets fc00::/7 "},
		{"https://8.8.8.8/hook", ""},
	} {
		r := b.cli(t, "", "endpoint", "add", "acme", "--endpoint-url", tc.url)
		if r.code != exitOK {
			t.Errorf("endpoint add --url %s: exit %d, stderr %q", tc.url, r.code, r.stderr)
			continue
		}
		if !strings.Contains(r.stdout, tc.url) {
			t.Errorf("endpoint add --url %s: stdout lacks the endpoint:\n%s", tc.url, r.stdout)
		}
		if tc.want == "" {
			if r.stderr != "" {
				t.Errorf("endpoint add --url %s: stderr %q, want nothing", tc.url, r.stderr)
			}
		} else if !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "hookd: ") != 1 {
			t.Errorf("endpoint add --url %s: stderr %q, want one note with %q", tc.url, r.stderr, tc.want)
		}
	}
}
