package hookd_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// age moves the creation time of messages back by d, in the store's own table, so that the test
// needs no clock of its own.
func (b *bundle) age(t *testing.T, d time.Duration, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := b.store.DB().ExecContext(b.ctx, `UPDATE hookd_messages SET created_at = created_at - ? WHERE id = ?`, d.Microseconds(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRetention: with Config.Retention, messages created longer ago go with their deliveries
// and attempts, recent ones stay, and an old message whose delivery is still pending stays too.
func TestRetention(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RetrySchedule = []time.Duration{time.Hour} // a failed first attempt leaves the delivery pending
	b := setup(t, cfg)
	ok := b.endpoint(t, "/ok", nil, &hookd.EndpointIn{Channels: []string{"ok"}})
	bad := b.endpoint(t, "/bad", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}), &hookd.EndpointIn{Channels: []string{"bad"}})
	old := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "a.b", Channels: []string{"ok"}, Tags: []string{"t"}})
	recent := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "a.b", Channels: []string{"ok"}})
	stuck := b.send(t, b.app.ID, &hookd.MessageIn{EventType: "a.b", Channels: []string{"bad"}})
	oldDelivery := b.waitStatus(t, old.Message.ID, ok.ID, hookd.DeliveryDelivered)
	b.waitStatus(t, recent.Message.ID, ok.ID, hookd.DeliveryDelivered)
	b.waitAttempts(t, stuck.Message.ID, bad.ID, 1)
	b.age(t, 3*24*time.Hour, old.Message.ID, stuck.Message.ID)
	b.age(t, 12*time.Hour, recent.Message.ID)

	// A manual retry of the old message still queued goes with it; the pending retry stays.
	if _, err := b.store.DB().ExecContext(b.ctx, `INSERT INTO hookd_jobs (lane, run_at, delivery_id, attempt) VALUES ('manual', ?, ?, 2)`,
		time.Now().Add(time.Hour).UnixMicro(), oldDelivery.ID); err != nil {
		t.Fatal(err)
	}
	stuckDelivery := b.waitStatus(t, stuck.Message.ID, bad.ID, hookd.DeliveryPending)
	jobs := func(deliveryID string) int {
		t.Helper()
		var n int
		if err := b.store.DB().QueryRowContext(b.ctx, `SELECT count(*) FROM hookd_jobs WHERE delivery_id = ?`, deliveryID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The first attempt's job goes when the queue settles it, in a batch after the attempt is
	// recorded: wait for the pending delivery to hold its retry's job alone.
	for deadline := time.Now().Add(10 * time.Second); jobs(stuckDelivery.ID) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs of the pending delivery before the cleaner, want its retry", jobs(stuckDelivery.ID))
		}
	}

	rcfg := testConfig()
	rcfg.Retention = 2 * 24 * time.Hour
	c, err := hookd.NewClient(b.store, rcfg) // not started: the test runs the cleaner itself
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.DeleteOldMessages(b.ctx)
	if err != nil || n != (hookd.RetentionCount{Messages: 1, Deliveries: 1, Attempts: 1}) {
		t.Fatalf("deleted %+v, %v; want the old message, its delivery and its attempt", n, err)
	}
	if got := c.RetentionDeleted(); got != n {
		t.Fatalf("RetentionDeleted %+v, want %+v", got, n)
	}
	if _, err := c.GetMessage(b.ctx, b.app.ID, old.Message.ID); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("old message: %v, want ErrNotFound", err)
	}
	if _, err := b.store.GetDelivery(b.ctx, oldDelivery.ID); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("old delivery: %v, want ErrNotFound", err)
	}
	if got := b.attempts(t, old.Message.ID, ok.ID); len(got) != 0 {
		t.Fatalf("old attempts left: %d", len(got))
	}
	for _, id := range []string{recent.Message.ID, stuck.Message.ID} {
		if _, err := c.GetMessage(b.ctx, b.app.ID, id); err != nil {
			t.Fatalf("kept message %s: %v", id, err)
		}
	}
	if d := b.waitStatus(t, stuck.Message.ID, bad.ID, hookd.DeliveryPending); d.Attempts != 1 {
		t.Fatalf("pending delivery after the cleaner: %+v", d)
	}
	if got := jobs(oldDelivery.ID); got != 0 {
		t.Fatalf("%d jobs of the deleted delivery left", got)
	}
	if got := jobs(stuckDelivery.ID); got != 1 {
		t.Fatalf("%d jobs of the pending delivery, want its retry", got)
	}
	if n, err := c.DeleteOldMessages(b.ctx); err != nil || n != (hookd.RetentionCount{}) {
		t.Fatalf("second run deleted %+v, %v; want nothing", n, err)
	}

	// Without Retention nothing is deleted; below MinRetention the client is refused.
	b.age(t, 365*24*time.Hour, recent.Message.ID)
	if n, err := b.client.DeleteOldMessages(b.ctx); err != nil || n != (hookd.RetentionCount{}) {
		t.Fatalf("client without Retention deleted %+v, %v", n, err)
	}
	short := testConfig()
	short.Retention = time.Hour
	if _, err := hookd.NewClient(b.store, short); err == nil {
		t.Fatal("Retention of an hour accepted")
	}
}

// TestRetentionRunsInStart: a started client with Retention deletes old messages (at once when it
// starts) and its Stop waits for the cleaner.
func TestRetentionRunsInStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	past := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Microsecond)
	app := hookd.Application{ID: "app_retain", Name: "Retain", CreatedAt: past, UpdatedAt: past}
	msg := hookd.Message{ID: "msg_retain", AppID: app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past}
	store := storeWith(ctx, t, &app, &msg)
	cfg := testConfig()
	cfg.Retention = hookd.MinRetention
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	for {
		_, err := store.GetMessage(ctx, app.ID, msg.ID)
		if errors.Is(err, hookd.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the started client did not delete the old message")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The message leaves the store before the cleaner adds it to its count; once Stop returns
	// the cleaner has returned, and the count is whole.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.RetentionDeleted(); got.Messages != 1 {
		t.Fatalf("RetentionDeleted %+v, want one message", got)
	}
}

// TestRetentionDoesNotBlockSends: while the cleaner deletes 10,000 old messages and their
// deliveries, sends go on and each is answered within a generous bound.
func TestRetentionDoesNotBlockSends(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20,000 rows")
	}
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/ok", nil, nil)
	// 200 under the race detector, where the pure-Go SQLite is ten times slower and the cleaner,
	// which yields the write connection to each send, does not sweep more within the bundle's
	// 30 s context; 10,000 otherwise.
	old := 10000
	if raceEnabled {
		old = 200
	}
	past := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
	err := b.store.InTx(b.ctx, func(tx hookd.Tx) error {
		ds := make([]hookd.Delivery, 0, old)
		for i := range old {
			m := hookd.Message{ID: fmt.Sprintf("msg_old%06d", i), AppID: b.app.ID, EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past}
			if _, _, err := tx.InsertMessage(b.ctx, &m); err != nil {
				return err
			}
			ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_old%06d", i), MessageID: m.ID, EndpointID: ep.ID, AppID: b.app.ID,
				Status: hookd.DeliveryDelivered, CreatedAt: past, UpdatedAt: past})
		}
		return tx.InsertDeliveries(b.ctx, ds)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Retention = hookd.MinRetention
	c, err := hookd.NewClient(b.store, cfg)
	if err != nil {
		t.Fatal(err)
	}

	var (
		wg      sync.WaitGroup
		deleted hookd.RetentionCount
		delErr  error
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		deleted, delErr = c.DeleteOldMessages(b.ctx)
	}()
	var sends int
	var slowest time.Duration
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		start := time.Now()
		if _, err := b.client.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
		sends++
	}
	wg.Wait()
	if delErr != nil || deleted != (hookd.RetentionCount{Messages: old, Deliveries: old}) {
		t.Fatalf("deleted %+v, %v; want %d messages and deliveries", deleted, delErr, old)
	}
	t.Logf("%d sends while the cleaner ran, the slowest answered in %s", sends, slowest)
	if !raceEnabled && slowest > 2*time.Second {
		t.Fatalf("a send waited %s while the cleaner ran", slowest)
	}
}

// storeWith opens a SQLite store on a new file holding app and msg, closed at the test's end.
func storeWith(ctx context.Context, t *testing.T, app *hookd.Application, msg *hookd.Message) *sqlite.Store {
	t.Helper()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	err = store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, app); err != nil {
			return err
		}
		_, _, err := tx.InsertMessage(ctx, msg)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return store
}
