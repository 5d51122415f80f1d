package hookd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// recoverSetup is a client that is not started, on a fresh SQLite file, with an endpoint that has
// n failed deliveries created at base, base+1µs, ...
func recoverSetup(t *testing.T, n int) (context.Context, *sqlite.Store, *hookd.Client, *hookd.Endpoint, time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c, err := hookd.NewClient(store, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Rec", UID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: "https://receiver.example/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	err = store.InTx(ctx, func(tx hookd.Tx) error {
		ds := make([]hookd.Delivery, 0, n)
		for i := range n {
			at := base.Add(time.Duration(i) * time.Microsecond)
			m := hookd.Message{ID: fmt.Sprintf("msg_rec%08d", i), AppID: app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: at}
			if _, _, err := tx.InsertMessage(ctx, &m); err != nil {
				return err
			}
			ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_rec%08d", i), MessageID: m.ID, EndpointID: ep.ID, AppID: app.ID,
				Status: hookd.DeliveryFailed, Attempts: 3, CreatedAt: at, UpdatedAt: at})
		}
		return tx.InsertDeliveries(ctx, ds)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, store, c, ep, base
}

// queuedJobs counts the jobs in the SQLite queue.
func queuedJobs(t *testing.T, ctx context.Context, store *sqlite.Store) int {
	t.Helper()
	var n int
	if err := store.DB().QueryRowContext(ctx, `SELECT count(*) FROM hookd_jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRecoverCapsAtMaxRecover: one recovery queues at most MaxRecover attempts, as Svix caps it.
func TestRecoverCapsAtMaxRecover(t *testing.T) {
	t.Parallel()
	ctx, store, c, ep, base := recoverSetup(t, hookd.MaxRecover+1)
	n, err := c.RecoverRange(ctx, ep.AppID, ep.ID, base, nil)
	if err != nil || n != hookd.MaxRecover {
		t.Fatalf("recovered %d, want %d (%v)", n, hookd.MaxRecover, err)
	}
	if got := queuedJobs(t, ctx, store); got != hookd.MaxRecover {
		t.Fatalf("%d jobs queued, want %d", got, hookd.MaxRecover)
	}
}

// TestRecoverInBackground: on a client not started, the recovery runs before the call returns;
// on a started one, it runs in the background and its attempts are made.
func TestRecoverInBackground(t *testing.T) {
	t.Parallel()
	ctx, store, c, ep, base := recoverSetup(t, 3)
	if err := c.RecoverInBackground(ctx, ep.AppID, ep.ID, base, nil); err != nil {
		t.Fatal(err)
	}
	if got := queuedJobs(t, ctx, store); got != 3 {
		t.Fatalf("%d jobs queued by the recovery of a client not started, want 3", got)
	}
	if err := c.RecoverInBackground(ctx, ep.AppID, "ep_missing", base, nil); err == nil {
		t.Fatal("recovery of a missing endpoint: no error")
	}

	b := setup(t, nil)
	recv := b.endpoint(t, "/recovered", nil, nil)
	res := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "a.b"})
	if _, err := b.recv.Wait(ctx, "/recovered", 1); err != nil {
		t.Fatal(err)
	}
	// Recorded as delivered before it is made to fail below, else the worker's record overwrites it.
	b.waitStatus(t, res.Message.ID, recv.ID, hookd.DeliveryDelivered)
	if err := b.client.RecoverInBackground(ctx, b.app.ID, recv.ID, base, nil); err != nil {
		t.Fatal(err)
	}
	// The delivery was delivered, not failed: nothing to recover. A failed one is.
	if err := b.store.InTx(ctx, func(tx hookd.Tx) error {
		d, err := tx.GetDeliveryFor(ctx, res.Message.ID, recv.ID)
		if err != nil {
			return err
		}
		return tx.SetDeliveryStatus(ctx, d.ID, hookd.DeliveryFailed, nil, "made to fail", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.client.RecoverInBackground(ctx, b.app.ID, recv.ID, base, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.recv.Wait(ctx, "/recovered", 2); err != nil {
		t.Fatalf("the background recovery made no attempt: %v", err)
	}
}
