package main

import (
	"strings"
	"testing"
)

// TestEndpointAddWarnsOfGuardedAddress: endpoint add warns on stderr, and still adds the
// endpoint, when its host is or resolves to an address the SSRF guard refuses by default; a
// public address gets no warning.
func TestEndpointAddWarnsOfGuardedAddress(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	for _, tc := range []struct {
		url, want string // want "" means no warning
	}{
		{"http://127.0.0.1:9/hook", "hookd: warning: 127.0.0.1 resolves to 127.0.0.1, which hookd serve refuses by default (blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets (hookd serve --allow-subnets 127.0.0.0/8)); unless the server allows it, every attempt to this endpoint fails"},
		{"http://localhost:9/hook", "hookd: warning: localhost resolves to "},
		{"https://10.0.0.7/hook", "is a private address"},
		{"https://169.254.10.1/hook", "is a link-local address"},
		{"https://[fd00::1]/hook", "is a unique-local address"},
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
			if strings.Contains(r.stderr, "warning") {
				t.Errorf("endpoint add --url %s warned: %q", tc.url, r.stderr)
			}
		} else if !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "warning") != 1 {
			t.Errorf("endpoint add --url %s: stderr %q, want one warning with %q", tc.url, r.stderr, tc.want)
		}
	}
}
