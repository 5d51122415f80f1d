package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestDeleteOldMessagesYields: while another transaction waits for the write connection,
// DeleteOldMessages commits after its first step of a few messages and the waiter gets the
// connection next; without one it goes on, and calls until one deletes nothing take every old
// message with its deliveries.
func TestDeleteOldMessagesYields(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const old = 300
	past := time.Now().Add(-30 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
	err = s.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.InsertApplication(ctx, &hookd.Application{ID: "app_1", Name: "A", CreatedAt: past, UpdatedAt: past}); err != nil {
			return err
		}
		if err := tx.InsertEndpoint(ctx, &hookd.Endpoint{ID: "ep_1", AppID: "app_1", URL: "https://example.com/", CreatedAt: past, UpdatedAt: past},
			hookd.SigningKey{Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", CreatedAt: past}); err != nil {
			return err
		}
		ds := make([]hookd.Delivery, 0, old)
		for i := range old {
			m := hookd.Message{ID: fmt.Sprintf("msg_%04d", i), AppID: "app_1", EventType: "a.b", Payload: []byte(`{}`), CreatedAt: past.Add(time.Duration(i))}
			if _, _, err := tx.InsertMessage(ctx, &m); err != nil {
				return err
			}
			ds = append(ds, hookd.Delivery{ID: fmt.Sprintf("dlv_%04d", i), MessageID: m.ID, EndpointID: "ep_1", AppID: "app_1",
				Status: hookd.DeliveryDelivered, CreatedAt: past, UpdatedAt: past})
		}
		return tx.InsertDeliveries(ctx, ds)
	})
	if err != nil {
		t.Fatal(err)
	}

	// A send waits for the gate: the cleaner deletes one step, commits and hands it over.
	waiter := &gateWaiter{ready: make(chan struct{}), since: time.Now()}
	s.gate.mu.Lock()
	s.gate.urgent = append(s.gate.urgent, waiter)
	s.gate.mu.Unlock()
	n, err := s.DeleteOldMessages(ctx, time.Now(), old)
	if err != nil || n != (hookd.RetentionCount{Messages: retentionStepStart, Deliveries: retentionStepStart}) {
		t.Fatalf("with a waiter: deleted %+v, %v; want the first step of %d", n, err, retentionStepStart)
	}
	select {
	case <-waiter.ready:
	default:
		t.Fatal("the waiter was not handed the gate")
	}
	s.gate.release()

	total := n
	for calls := 0; ; calls++ {
		n, err := s.DeleteOldMessages(ctx, time.Now(), old)
		if err != nil {
			t.Fatal(err)
		}
		if n.Messages == 0 {
			break
		}
		total.Messages += n.Messages
		total.Deliveries += n.Deliveries
		if calls > old {
			t.Fatal("the cleaner never ended")
		}
	}
	if total != (hookd.RetentionCount{Messages: old, Deliveries: old}) {
		t.Fatalf("deleted %+v in all, want %d messages and deliveries", total, old)
	}
	if step := s.retention.step.Load(); step < 1 || step > retentionMaxStep {
		t.Fatalf("step %d, want 1 to %d", step, retentionMaxStep)
	}
}
