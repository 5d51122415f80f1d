package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
)

// A write held for the commit that fails (a delivery of no message) fails the transaction with
// its error, classified, and leaves nothing of the transaction behind; the pool's connection is
// usable again.
func TestHeldWriteFailsTheCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now()
	err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &hookd.Application{ID: "app_held", Name: "held", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		tx.(hookd.MessageBatchWriter).HoldWrites()
		return tx.InsertDeliveries(ctx, []hookd.Delivery{{ID: "dlv_held", MessageID: "msg_none", EndpointID: "ep_none", AppID: "app_held",
			Status: hookd.DeliveryPending, CreatedAt: now, UpdatedAt: now}})
	})
	if !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("InTx: %v, want the held delivery's ErrNotFound", err)
	}
	if _, err := b.store.GetApplication(ctx, "app_held"); !errors.Is(err, hookd.ErrNotFound) {
		t.Errorf("application of the failed transaction: %v, want ErrNotFound", err)
	}
	for range 20 { // more than the pool's connections: none is left in a transaction
		if err := b.store.InTx(ctx, func(tx hookd.Tx) error {
			_, err := tx.ListApplications(ctx, hookd.ListOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Raw of an InTx transaction is a pgx.Tx in the same transaction, after what was held: what it
// writes commits, or rolls back, with the rest.
func TestRawFollowsHeldWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now()
	for _, fail := range []bool{false, true} {
		id := map[bool]string{false: "app_kept", true: "app_dropped"}[fail]
		err := b.store.InTx(ctx, func(tx hookd.Tx) error {
			tx.(hookd.MessageBatchWriter).HoldWrites()
			if err := tx.InsertApplication(ctx, &hookd.Application{ID: id, Name: "raw", CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
			raw, ok := tx.Raw().(pgx.Tx)
			if !ok {
				t.Fatalf("Raw is %T, want a pgx.Tx", tx.Raw())
			}
			// The held insert went first: the application is there to rename.
			tag, err := raw.Exec(ctx, `UPDATE hookd_applications SET name = 'renamed' WHERE id = $1`, id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				t.Errorf("Raw's update found %d rows, want the held insert's", tag.RowsAffected())
			}
			if fail {
				return errors.New("fn fails")
			}
			return nil
		})
		if fail != (err != nil) {
			t.Fatalf("InTx (fn fails: %v): %v", fail, err)
		}
		a, err := b.store.GetApplication(ctx, id)
		switch {
		case fail && !errors.Is(err, hookd.ErrNotFound):
			t.Errorf("application of the rolled back transaction: %v, want ErrNotFound", err)
		case !fail && (err != nil || a.Name != "renamed"):
			t.Errorf("application of the committed transaction: %+v, %v; want renamed", a, err)
		}
	}
}
