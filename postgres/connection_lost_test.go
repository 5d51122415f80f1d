package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
)

// A transaction whose connection the server ends (pg_terminate_backend, as a fast shutdown does
// to every connection) fails as hookd.ErrUnavailable, which the API answers 503: whether the
// statement that meets the lost connection is the queue's enqueue, a list read or the caller's
// own on Raw. The queue's enqueue and the lists once returned the driver's error as it was, and
// the API answered 500.
func TestConnectionLostIsUnavailable(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	q, err := b.store.NewQueue(nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	terminate := func(t *testing.T, tx hookd.Tx) {
		t.Helper()
		raw := tx.Raw().(pgx.Tx)
		var pid int32
		if err := raw.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		var ended bool
		if err := admin.QueryRow(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ended); err != nil || !ended {
			t.Fatalf("pg_terminate_backend(%d) = %t, %v", pid, ended, err)
		}
	}
	for _, tc := range []struct {
		name      string
		statement func(tx hookd.Tx) error
	}{
		{"queue enqueue", func(tx hookd.Tx) error {
			err := q.EnqueueTx(ctx, tx, []hookd.Job{{DeliveryID: "dlv_lost"}})
			if !errors.Is(err, hookd.ErrUnavailable) {
				t.Errorf("EnqueueTx on a lost connection: %v, want hookd.ErrUnavailable", err)
			}
			return err
		}},
		{"a list read", func(tx hookd.Tx) error {
			_, err := tx.ListApplications(ctx, hookd.ListOptions{})
			if !errors.Is(err, hookd.ErrUnavailable) {
				t.Errorf("ListApplications on a lost connection: %v, want hookd.ErrUnavailable", err)
			}
			return err
		}},
		{"caller's statement on Raw", func(tx hookd.Tx) error {
			_, err := tx.Raw().(pgx.Tx).Exec(ctx, `SELECT 1`)
			return err // unmarked: InTx marks it
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.store.InTx(ctx, func(tx hookd.Tx) error {
				terminate(t, tx)
				return tc.statement(tx)
			})
			if !errors.Is(err, hookd.ErrUnavailable) {
				t.Errorf("InTx: %v, want hookd.ErrUnavailable", err)
			}
			// The pool replaces the lost connection: the next transaction works.
			if err := b.store.InTx(ctx, func(tx hookd.Tx) error {
				_, err := tx.Raw().(pgx.Tx).Exec(ctx, `SELECT 1`)
				return err
			}); err != nil {
				t.Errorf("the next transaction: %v", err)
			}
		})
	}
}
