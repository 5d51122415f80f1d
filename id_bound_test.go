package hookd

import (
	"testing"
	"time"
)

// A client whose ids follow its clock bounds a list by time with ids a minute wider than the
// times: every message made in the window sorts inside the bounds, and one made more than a
// minute outside it does not. A client whose clock stepped back, and whose ids so count up from
// a later time, sets no bounds, so that its lists stay exact.
func TestIDBounds(t *testing.T) {
	c := &Client{cfg: &Config{Now: time.Now}, ids: &ids}
	after := time.Now().Add(-time.Hour)
	before := time.Now()
	inside := newID(prefixMessage) // made at "before"
	from, to := c.idBounds(prefixMessage, &after, &before)
	if from == "" || to == "" {
		t.Fatalf("no bounds on the process's clock: %q, %q", from, to)
	}
	if !(from <= inside && inside < to) {
		t.Errorf("an id made in the window, %s, is outside [%s, %s)", inside, from, to)
	}
	if early := idFloor(prefixMessage, after.Add(-2*time.Minute)); early >= from {
		t.Errorf("an id made two minutes before the window, %s, is not below %s", early, from)
	}
	if late := idFloor(prefixMessage, before.Add(2*time.Minute)); late < to {
		t.Errorf("an id made two minutes after the window, %s, is not at or above %s", late, to)
	}
	if from, to := c.idBounds(prefixMessage, nil, nil); from != "" || to != "" {
		t.Errorf("bounds without times: %q, %q", from, to)
	}
	if from, to := c.idBounds(prefixMessage, &after, nil); from == "" || to != "" {
		t.Errorf("bounds with after alone: %q, %q", from, to)
	}

	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := past
	fake := &Client{cfg: &Config{Now: func() time.Time { return clock }}, ids: new(idSource)}
	pastAfter, pastBefore := past.Add(-time.Hour), past.Add(time.Hour)
	if from, to := fake.idBounds(prefixMessage, &pastAfter, &pastBefore); from == "" || to == "" {
		t.Errorf("no bounds on a client's own clock: %q, %q", from, to)
	}
	clock = past.Add(time.Hour)
	fake.newID(prefixMessage) // an id an hour on; the clock then steps back
	clock = past
	if from, to := fake.idBounds(prefixMessage, &pastAfter, &pastBefore); from != "" || to != "" {
		t.Errorf("bounds on a clock stepped back behind its ids: %q, %q", from, to)
	}
}
