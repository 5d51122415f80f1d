package hookd_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// This file tests the reads the dashboard makes in one statement where the store can.

// TestAttemptsByEndpoint counts attempts endpoint by endpoint: in one statement on a store that
// can (SQLite here), and one AttemptsPerHour an endpoint on a store that cannot, alike.
func TestAttemptsByEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ok := b.endpoint(t, "/ok", hookdtest.OK(), nil)
	failing := b.endpoint(t, "/failing", hookdtest.Status(http.StatusInternalServerError, "no"), nil)
	idle := b.endpoint(t, "/idle", hookdtest.OK(), &hookd.EndpointIn{EventTypes: []string{"never.sent"}})
	msg := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, msg.Message.ID, ok.ID, hookd.DeliveryDelivered)
	b.waitStatus(t, msg.Message.ID, failing.ID, hookd.DeliveryFailed)

	want := map[string]hookd.AttemptCount{ok.ID: {Succeeded: 1}, failing.ID: {Failed: 4}} // testConfig: 3 retries
	ids := []string{ok.ID, failing.ID, idle.ID}
	since := time.Now().Add(-time.Hour)
	got, err := b.client.AttemptsByEndpoint(b.ctx, "acme", ids, since)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "one statement", want, got)

	// A store without hookd.EndpointAttemptCounter: the same store behind the Store interface only.
	plain, err := hookd.NewClient(struct{ hookd.Store }{b.store}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err = plain.AttemptsByEndpoint(b.ctx, "acme", ids, since)
	if err != nil {
		t.Fatal(err)
	}
	equalCounts(t, "one AttemptsPerHour an endpoint", want, got)

	if got, err := b.client.AttemptsByEndpoint(b.ctx, "acme", ids, time.Now().Add(time.Minute)); err != nil || len(got) != 0 {
		t.Errorf("attempts since a minute from now: %v, %v; want none", got, err)
	}
	if _, err := b.client.AttemptsByEndpoint(b.ctx, "no_such_app", ids, since); !errors.Is(err, hookd.ErrNotFound) {
		t.Errorf("an unknown application: %v, want ErrNotFound", err)
	}
}

func equalCounts(t *testing.T, what string, want, got map[string]hookd.AttemptCount) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
		return
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
	}
}

// TestGetMessages reads messages by id: in one statement on a store that can, one by one on a
// store that cannot, alike; event ids, other applications' messages and missing ids are left out.
func TestGetMessages(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	m1 := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "invoice.paid", EventID: "evt_1"}).Message
	m2 := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "invoice.voided"}).Message
	other, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	mo := b.send(t, other.ID, &hookd.MessageIn{EventType: "invoice.paid"}).Message
	ids := []string{m1.ID, m2.ID, m1.ID, mo.ID, "evt_1", "msg_missing"} // m1 twice: two of its deliveries
	plain, err := hookd.NewClient(struct{ hookd.Store }{b.store}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*hookd.Client{"one statement": b.client, "one by one": plain} {
		got, err := c.GetMessages(b.ctx, "acme", ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[m1.ID].EventType != "invoice.paid" || got[m2.ID].EventType != "invoice.voided" {
			t.Errorf("%s: %+v, want %s and %s", name, got, m1.ID, m2.ID)
		}
	}
	if _, err := b.client.GetMessages(b.ctx, "no_such_app", ids); !errors.Is(err, hookd.ErrNotFound) {
		t.Errorf("an unknown application: %v, want ErrNotFound", err)
	}
}
