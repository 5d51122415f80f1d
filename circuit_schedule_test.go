package hookd_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// A try that falls due while the endpoint's circuit is open is recorded as a failed attempt that
// was not sent, and the schedule moves on: a dead endpoint's backlog ends within its schedule,
// and a pending delivery's nextAttempt is the time the schedule gives. The circuit's cool-down runs
// on Config.Now, a clock the test holds still: without the rule every try would wait the hour.
func TestCircuitOpenTriesNotSent(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := testConfig()
	cfg.Now = clk.Now
	cfg.CircuitThreshold = 1
	cfg.CircuitCooldown = time.Hour
	cfg.CircuitMaxCooldown = 2 * time.Hour
	cfg.RetrySchedule = []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
	cfg.Jitter = -1
	b := setup(t, cfg)
	var healthy atomic.Bool
	ep := b.endpoint(t, "/dead", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if healthy.Load() {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}), nil)

	// The first failure opens the circuit; the three retries are not sent.
	first := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, first.Message.ID, ep.ID, hookd.DeliveryFailed)
	as := b.attempts(t, first.Message.ID, ep.ID)
	if len(as) != 4 || as[0].StatusCode != http.StatusInternalServerError {
		t.Fatalf("attempts %+v, want a 500 and three not sent", as)
	}
	for _, a := range as[1:] {
		if a.Success || a.StatusCode != 0 || a.Error != "circuit open: not sent" || a.Response != "circuit open: not sent" || a.Duration != 0 {
			t.Errorf("attempt %d = %+v, want failed, not sent", a.Number, a)
		}
	}

	// Messages sent while it is open end within their schedule, none reaching the receiver.
	var later []string
	for range 5 {
		later = append(later, b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"}).Message.ID)
	}
	for _, id := range later {
		b.waitStatus(t, id, ep.ID, hookd.DeliveryFailed)
		if as := b.attempts(t, id, ep.ID); len(as) != 4 || as[3].Error != "circuit open: not sent" {
			t.Errorf("message %s: %d attempts, the last %+v; want 4, not sent", id, len(as), as[len(as)-1])
		}
	}
	if n := len(b.recv.Requests("/dead")); n != 1 {
		t.Errorf("the receiver got %d requests while the circuit was open, want the first alone", n)
	}

	// A manual attempt is an operator's act: it goes through the open circuit.
	if err := b.client.Resend(b.ctx, b.app.ID, later[0], ep.ID); err != nil {
		t.Fatal(err)
	}
	b.waitRequests(t, "/dead", 2)
	// Recorded before the endpoint recovers: a failure recorded after the probe's success would
	// open the circuit again (its threshold is one).
	if as := b.waitAttempts(t, later[0], ep.ID, 5); as[4].Trigger != hookd.TriggerManual || as[4].StatusCode != http.StatusInternalServerError {
		t.Fatalf("manual attempt %+v, want a manual 500", as[4])
	}

	// Past the cool-down the next due try is the probe; its success closes the circuit.
	clk.Add(61 * time.Minute)
	healthy.Store(true)
	probe := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, probe.Message.ID, ep.ID, hookd.DeliveryDelivered)
	after := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, after.Message.ID, ep.ID, hookd.DeliveryDelivered)
}

// A pending delivery's nextAttempt is when its next try falls due, also when the tries before it
// were not sent: the not-sent attempt sets it as any failure does.
func TestCircuitOpenNextAttemptIsReal(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	cfg := testConfig()
	cfg.Now = clk.Now
	cfg.CircuitThreshold = 1
	cfg.CircuitCooldown = time.Hour
	cfg.CircuitMaxCooldown = time.Hour
	cfg.RetrySchedule = []time.Duration{10 * time.Millisecond, 3 * time.Hour}
	cfg.Jitter = -1
	b := setup(t, cfg)
	ep := b.endpoint(t, "/dead", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	as := b.waitAttempts(t, res.Message.ID, ep.ID, 2)
	if as[1].Error != "circuit open: not sent" {
		t.Fatalf("second attempt %+v, want not sent", as[1])
	}
	d, err := b.store.GetDeliveryFor(b.ctx, res.Message.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := clk.Now().Add(3 * time.Hour)
	if d.Status != hookd.DeliveryPending || d.Attempts != 2 || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(want) {
		t.Fatalf("delivery %+v (next %v), want pending after 2 attempts, next at %s", d, d.NextAttemptAt, want)
	}
}
