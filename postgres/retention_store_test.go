package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
)

// TestDeleteOldMessagesOneAtATime: while another process holds the schema's retention lock,
// DeleteOldMessages deletes nothing; once it is released, the old message goes..
func TestDeleteOldMessagesOneAtATime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	past := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Microsecond)
	app := hookd.Application{ID: "app_lock", Name: "Lock", CreatedAt: past, UpdatedAt: past}
	msg := hookd.Message{ID: "msg_lock", AppID: app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past}
	err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &app); err != nil {
			return err
		}
		_, _, err := tx.InsertMessage(ctx, &msg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	holder, err := b.store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.RetentionLockKey(b.schema)); err != nil {
		t.Fatal(err)
	}
	n, err := b.store.DeleteOldMessages(ctx, time.Now(), 10)
	if err != nil || n != (hookd.RetentionCount{}) {
		t.Fatalf("while the lock is held: %+v, %v; want nothing deleted", n, err)
	}
	if _, err := b.store.GetMessage(ctx, app.ID, msg.ID); err != nil {
		t.Fatalf("message while the lock is held: %v", err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	n, err = b.store.DeleteOldMessages(ctx, time.Now(), 10)
	if err != nil || n != (hookd.RetentionCount{Messages: 1}) {
		t.Fatalf("after the lock is released: %+v, %v; want one message", n, err)
	}
	if _, err := b.store.GetMessage(ctx, app.ID, msg.ID); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("message after the cleaner: %v, want ErrNotFound", err)
	}
}

// TestDeleteOldMessagesBesideSends: while a client's cleaner deletes 10,000 old messages and
// their deliveries, sends on the same database go on and each is answered within a generous
// bound.
func TestDeleteOldMessagesBesideSends(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20,000 rows")
	}
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const old = 10000
	past := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
	app := hookd.Application{ID: "app_bulk", Name: "Bulk", CreatedAt: past, UpdatedAt: past}
	err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &app); err != nil {
			return err
		}
		ds := make([]hookd.Delivery, 0, old)
		for i := range old {
			m := hookd.Message{ID: fmt.Sprintf("msg_old%06d", i), AppID: app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past}
			if _, _, err := tx.InsertMessage(ctx, &m); err != nil {
				return err
			}
			ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_old%06d", i), MessageID: m.ID, EndpointID: "ep_gone", AppID: app.ID,
				Status: hookd.DeliveryDelivered, CreatedAt: past, UpdatedAt: past})
		}
		return tx.InsertDeliveries(ctx, ds)
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := hookd.NewClient(b.store, &hookd.Config{Retention: hookd.MinRetention})
	if err != nil {
		t.Fatal(err)
	}
	var (
		deleted hookd.RetentionCount
		delErr  error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		deleted, delErr = c.DeleteOldMessages(ctx)
	}()
	sends, slowest := 0, time.Duration(0)
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		start := time.Now()
		if _, err := c.Send(ctx, app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
		sends++
	}
	if delErr != nil || deleted != (hookd.RetentionCount{Messages: old, Deliveries: old}) {
		t.Fatalf("deleted %+v, %v; want %d messages and deliveries", deleted, delErr, old)
	}
	t.Logf("%d sends while the cleaner ran, the slowest answered in %s", sends, slowest)
	if slowest > 2*time.Second {
		t.Fatalf("a send waited %s while the cleaner ran", slowest)
	}
}
