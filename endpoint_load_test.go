package hookd

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEndpointLoadsShareOneRead(t *testing.T) {
	var l endpointLoads
	var reads atomic.Int32
	release := make(chan struct{})
	load := func() (*Endpoint, []SigningKey, error) {
		reads.Add(1)
		<-release
		return &Endpoint{ID: "ep_1"}, []SigningKey{{Secret: "whsec_k"}}, nil
	}
	const workers = 8
	var wg sync.WaitGroup
	got := make(chan *Endpoint, workers)
	for range workers {
		wg.Go(func() {
			ep, keys, err := l.do(context.Background(), "ep_1", load)
			if err != nil || len(keys) != 1 {
				t.Errorf("do: %v, %d keys", err, len(keys))
			}
			got <- ep
		})
	}
	// Every worker is in: one reading, the rest waiting on its read.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		in := l.m["ep_1"]
		waiting := in != nil && in.waiters == workers-1
		l.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the workers neither read nor waited on one read")
		}
	}
	close(release)
	wg.Wait()
	close(got)
	var first *Endpoint
	for ep := range got {
		if first == nil {
			first = ep
		}
		if ep != first {
			t.Error("workers got different reads")
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d workers missing at once made %d reads, want 1", workers, n)
	}
	// A read that has ended is not shared: the next miss reads again.
	if _, _, err := l.do(context.Background(), "ep_1", func() (*Endpoint, []SigningKey, error) {
		reads.Add(1)
		return &Endpoint{ID: "ep_1"}, nil, nil
	}); err != nil || reads.Load() != 2 {
		t.Errorf("a later miss: %v, %d reads, want 2", err, reads.Load())
	}
}

func TestEndpointLoadsForgetStartsAFreshRead(t *testing.T) {
	var l endpointLoads
	release := make(chan struct{})
	started := make(chan struct{})
	go l.do(context.Background(), "ep_1", func() (*Endpoint, []SigningKey, error) {
		close(started)
		<-release
		return &Endpoint{ID: "ep_1", URL: "old"}, nil, nil
	})
	<-started
	l.forget("ep_1") // the endpoint changed while the read was in flight
	ep, _, err := l.do(context.Background(), "ep_1", func() (*Endpoint, []SigningKey, error) {
		return &Endpoint{ID: "ep_1", URL: "new"}, nil, nil
	})
	close(release)
	if err != nil || ep.URL != "new" {
		t.Errorf("a miss after the change got %+v, %v; want the new read", ep, err)
	}
}

func TestEndpointLoadsWaiterLeavesWithItsContext(t *testing.T) {
	var l endpointLoads
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	go l.do(context.Background(), "ep_1", func() (*Endpoint, []SigningKey, error) {
		close(started)
		<-release
		return &Endpoint{ID: "ep_1"}, nil, nil
	})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := l.do(ctx, "ep_1", nil); err != context.Canceled {
		t.Errorf("a waiter whose context ended: %v, want context.Canceled", err)
	}
}
