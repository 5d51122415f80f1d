package hookd_test

import (
	"net"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
)

// An attempt that got no response keeps, as Svix's does, status 0 and the reason as its response:
// a closed port, an address the SSRF guard blocks, a receiver that never answers.
func TestTransportFailureIsTheAttemptsResponse(t *testing.T) {
	t.Parallel()
	closedPort := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr + "/hook"
	}
	tests := []struct {
		name  string
		cfg   func() *hookd.Config
		url   func(t *testing.T, b *bundle) string
		wantR string
	}{
		{"closed port", testConfig, func(t *testing.T, _ *bundle) string { return closedPort(t) }, "connection refused"},
		{"blocked address", func() *hookd.Config {
			cfg := testConfig()
			cfg.Delivery = &delivery.Config{Timeout: 300 * time.Millisecond} // the SSRF guard on, nothing allowed
			return cfg
		}, func(t *testing.T, b *bundle) string {
			b.recv.Handle("/ok", hookdtest.OK())
			return b.recv.URL("/ok")
		}, "blocked: 127.0.0.1 is a loopback address; to allow it, add 127.0.0.0/8 to Delivery.AllowSubnets (hookd serve --allow-subnets 127.0.0.0/8)"},
		{"hanging receiver", testConfig, func(t *testing.T, b *bundle) string {
			b.recv.Handle("/hang", hookdtest.Hang())
			return b.recv.URL("/hang")
		}, "no response within 300ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.cfg())
			ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: tc.url(t, b)})
			if err != nil {
				t.Fatal(err)
			}
			res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
			b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryFailed)
			attempts := b.attempts(t, res.Message.ID, ep.ID)
			if len(attempts) == 0 {
				t.Fatal("no attempts")
			}
			for _, a := range attempts {
				if a.StatusCode != 0 || a.Response != tc.wantR || a.Error != tc.wantR {
					t.Errorf("attempt %d: status %d, response %q, error %q; want 0 and %q", a.Number, a.StatusCode, a.Response, a.Error, tc.wantR)
				}
			}
		})
	}
}
