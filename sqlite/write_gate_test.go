package sqlite

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWriteGateOrder: with the gate held, a request waiter that came after a background one
// gets the gate first; a background waiter older than backgroundMaxWait goes before requests.
func TestWriteGateOrder(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	waiter := func(name string, background bool) {
		wg.Go(func() {
			if err := g.acquire(ctx, background); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			g.release()
		})
	}
	queued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			g.mu.Lock()
			got := len(g.urgent) + len(g.background)
			g.mu.Unlock()
			if got == n {
				return
			}
		}
		t.Fatalf("waiters never reached %d", n)
	}
	waiter("background", true)
	queued(1)
	waiter("request", false)
	queued(2)
	g.release()
	wg.Wait()
	if len(order) != 2 || order[0] != "request" {
		t.Fatalf("order %v, want the request first", order)
	}

	order = nil
	if err := g.acquire(ctx, false); err != nil {
		t.Fatal(err)
	}
	waiter("old background", true)
	queued(1)
	time.Sleep(backgroundMaxWait + 10*time.Millisecond)
	waiter("request", false)
	queued(2)
	g.release()
	wg.Wait()
	if len(order) != 2 || order[0] != "old background" {
		t.Fatalf("order %v, want the background waiter that waited past the bound first", order)
	}
}

// TestWriteGateCancel: a waiter whose context ends leaves the queue without the gate, and the
// gate still passes on.
func TestWriteGateCancel(t *testing.T) {
	var g writeGate
	if err := g.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.acquire(ctx, true); err == nil {
		t.Fatal("acquire with an ended context succeeded while the gate was held")
	}
	g.release()
	done := make(chan error, 1)
	go func() { done <- g.acquire(context.Background(), false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the gate was not free after the cancelled waiter left")
	}
}
