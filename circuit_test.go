package hookd_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// OpenCircuits names the endpoint whose circuit opened and not the healthy one.
func TestOpenCircuits(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.CircuitThreshold = 2
	cfg.CircuitCooldown = 5 * time.Minute // stays open for the rest of the test
	cfg.RetrySchedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	cfg.Jitter = -1
	b := setup(t, cfg)
	down := b.endpoint(t, "/down", hookdtest.Status(500, "down"), nil)
	ok := b.endpoint(t, "/ok", nil, nil)
	if got := b.client.OpenCircuits(); len(got) != 0 {
		t.Fatalf("open circuits before any attempt: %v", got)
	}
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ok.ID, hookd.DeliveryDelivered)

	// The circuit opens once the second failure is recorded, a moment after the receiver saw it.
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = b.client.OpenCircuits(); slices.Contains(got, down.ID) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(got, []string{down.ID}) {
		t.Fatalf("open circuits %v, want [%s] (healthy endpoint %s)", got, down.ID, ok.ID)
	}
	if !b.client.CircuitOpen(down.ID) {
		t.Error("OpenCircuits names an endpoint CircuitOpen calls closed")
	}
}
