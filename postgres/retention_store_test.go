package postgres_test

import (
	"context"
	"errors"
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
