package hookd_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// fakeClock is a Config.Now that tests set.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// idTime returns the encoded part of the least id made at t: ids of every prefix encode their
// time the same way, so an id's part after its prefix compares with it.
func idTime(t time.Time) string { return strings.TrimPrefix(hookd.AttemptIDFloor(t), "atmpt_") }

// idBody is id without its prefix.
func idBody(t *testing.T, id string) string {
	t.Helper()
	i := strings.IndexByte(id, '_')
	if i < 0 {
		t.Fatalf("id %q has no prefix", id)
	}
	return id[i+1:]
}

// checkMadeAt fails unless id was made at a time in [at, at+1ms): its time part is the clock's.
func checkMadeAt(t *testing.T, what, id string, at time.Time) {
	t.Helper()
	body := idBody(t, id)
	if lo, hi := idTime(at), idTime(at.Add(time.Millisecond)); body < lo || body >= hi {
		t.Errorf("%s %s: want an id made at %s (between %s and %s)", what, id, at.Format(time.RFC3339Nano), lo, hi)
	}
}

// The ids a client makes take their time from its clock (Config.Now), as CreatedAt does: a
// client whose clock runs over past days makes ids that sort by those days, and that the id
// bounds of a time range (AttemptIDFloor) find. A clock that steps back still gives ids that
// sort in the order made.
func TestIDsFollowTheClientsClock(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{}
	day0 := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Millisecond)
	clock.set(day0)
	cfg := testConfig()
	cfg.Now = clock.Now
	b := setup(t, cfg)
	checkMadeAt(t, "application", b.app.ID, day0)
	ep := b.endpoint(t, "/ok", hookdtest.OK(), nil)
	checkMadeAt(t, "endpoint", ep.ID, day0)

	var last string
	for i := range 4 {
		at := day0.Add(time.Duration(i) * 7 * 24 * time.Hour)
		clock.set(at)
		res := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "invoice.paid"})
		m := res.Message
		if !m.CreatedAt.Equal(at) {
			t.Errorf("message %d created at %s, want %s", i, m.CreatedAt, at)
		}
		checkMadeAt(t, "message", m.ID, at)
		d := b.waitStatus(t, m.ID, ep.ID, hookd.DeliveryDelivered)
		checkMadeAt(t, "delivery", d.ID, at)
		atts := b.attempts(t, m.ID, ep.ID)
		if len(atts) != 1 {
			t.Fatalf("message %d: %d attempts, want 1", i, len(atts))
		}
		checkMadeAt(t, "attempt", atts[0].ID, at)
		if atts[0].ID < hookd.AttemptIDFloor(at) || atts[0].ID >= hookd.AttemptIDFloor(at.Add(time.Hour)) {
			t.Errorf("attempt %s outside the id bounds of [%s, +1h)", atts[0].ID, at)
		}
		if idBody(t, m.ID) <= last {
			t.Errorf("message %d's id %s sorts before the previous %s", i, m.ID, last)
		}
		last = idBody(t, m.ID)
	}

	// The clock steps back a day: ids still sort in the order made, after the last one.
	back := day0.Add(20 * 24 * time.Hour)
	clock.set(back)
	for i := range 3 {
		m := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "invoice.paid"}).Message
		if !m.CreatedAt.Equal(back) {
			t.Errorf("message after the step back created at %s, want %s", m.CreatedAt, back)
		}
		if idBody(t, m.ID) <= last {
			t.Errorf("message %d after the step back: id %s sorts before the previous %s", i, m.ID, last)
		}
		last = idBody(t, m.ID)
	}

	// A client on the real clock makes ids of the present, beside the one on the past clock.
	cfg2 := testConfig()
	cfg2.EnqueueOnly = true // the store's queue is the first client's
	real, err := hookd.NewClient(b.store, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	app, err := real.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Now"})
	if err != nil {
		t.Fatal(err)
	}
	if body := idBody(t, app.ID); body < idTime(before) || body >= idTime(time.Now().Add(time.Millisecond)) {
		t.Errorf("application of the real clock %s: not made between %s and now", app.ID, before)
	}
}
