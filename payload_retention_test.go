package hookd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestPayloadRetention: a message's payload is kept for its PayloadRetention and deleted by the
// sweep once the client's clock passes it; the expired message reads back with a nil payload,
// cannot be resent, and its pending delivery is cancelled without an attempt.
func TestPayloadRetention(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2100, 1, 1, 12, 0, 0, 0, time.UTC)} // past the started client's own sweeps
	cfg := testConfig()
	cfg.Now = clk.Now
	b := setup(t, nil)
	c, err := hookd.NewClient(b.store, cfg) // not started: the test runs the sweep itself
	if err != nil {
		t.Fatal(err)
	}
	short, err := c.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}, PayloadRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := c.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.GetMessage(b.ctx, b.app.ID, short.Message.ID)
	if err != nil || m.PayloadExpiresAt == nil || !m.PayloadExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Fatalf("stored expiry %v, want %v (%v)", m.PayloadExpiresAt, clk.Now().Add(time.Hour), err)
	}
	if n, err := c.ExpirePayloads(b.ctx); err != nil || n != 0 {
		t.Fatalf("sweep before the expiry: %d, %v", n, err)
	}
	clk.Add(time.Hour)
	if n, err := c.ExpirePayloads(b.ctx); err != nil || n != 1 {
		t.Fatalf("sweep at the expiry: %d, %v", n, err)
	}
	m, err = c.GetMessage(b.ctx, b.app.ID, short.Message.ID)
	if err != nil || m.Payload != nil || m.PayloadExpiresAt != nil {
		t.Fatalf("expired message: payload %s, expiry %v, %v", m.Payload, m.PayloadExpiresAt, err)
	}
	if m, err := c.GetMessage(b.ctx, b.app.ID, kept.Message.ID); err != nil || m.Payload == nil {
		t.Fatalf("message without retention lost its payload: %v", err)
	}

	// A delivery of the expired message is cancelled, with no attempt made.
	ep := b.endpoint(t, "/expired", nil, nil)
	if err := c.Resend(b.ctx, b.app.ID, short.Message.ID, ep.ID); !errors.Is(err, hookd.ErrPayloadMissing) {
		t.Fatalf("resend of an expired message: %v, want ErrPayloadMissing", err)
	}
	// Sent and expired in one transaction, so that no worker sees the payload first.
	sqlTx, err := b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendTx(b.ctx, sqlTx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := b.store.WrapTx(sqlTx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.ExpungeMessagePayload(b.ctx, res.Message.ID); err != nil {
		t.Fatal(err)
	}
	if err := sqlTx.Commit(); err != nil {
		t.Fatal(err)
	}
	d := b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryCancelled)
	if d.LastError != "payload expired" || len(b.recv.Requests("/expired")) != 0 {
		t.Fatalf("delivery of an expired message: %+v, %d requests", d, len(b.recv.Requests("/expired")))
	}

	if _, err := c.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}, PayloadRetention: -time.Second}); !errors.Is(err, hookd.ErrInvalid) {
		t.Fatalf("negative retention: %v, want ErrInvalid", err)
	}
}

// TestPayloadSweepRunsInStart: a started client sweeps expired payloads (at once when it starts).
func TestPayloadSweepRunsInStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	app := hookd.Application{ID: "app_sweep", Name: "Sweep", CreatedAt: past, UpdatedAt: past}
	msg := hookd.Message{ID: "msg_sweep", AppID: app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past, PayloadExpiresAt: &past}
	store := storeWith(ctx, t, &app, &msg)
	c, err := hookd.NewClient(store, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	for {
		m, err := store.GetMessage(ctx, app.ID, msg.ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Payload == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the started client did not sweep the expired payload")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestMessageTagsInput: tags are kept without repeats; more than five, or an unprintable one, is
// refused.
func TestMessageTagsInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	res := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "a.b", Tags: []string{"x", "y", "x"}})
	if m, err := b.client.GetMessage(b.ctx, b.app.ID, res.Message.ID); err != nil || len(m.Tags) != 2 || m.Tags[0] != "x" || m.Tags[1] != "y" {
		t.Fatalf("stored tags %v, %v", m.Tags, err)
	}
	for _, tags := range [][]string{{"a", "b", "c", "d", "e", "f"}, {"a\x00"}, {""}} {
		_, err := b.client.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}, Tags: tags})
		if !errors.Is(err, hookd.ErrInvalid) {
			t.Fatalf("tags %q: %v, want ErrInvalid", tags, err)
		}
	}
}
