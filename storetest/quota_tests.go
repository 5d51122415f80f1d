package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

var endpointQuotaTests = []test{
	{"LockEndpointCountCounts", func(t *testing.T, f *fixture) {
		app := f.newApp()
		other := f.newApp()
		count := func(appID string) (int, error) {
			var n int
			err := f.writeErr(func(tx hookd.Tx) error {
				var err error
				n, err = tx.LockEndpointCount(f.ctx, appID)
				return err
			})
			return n, err
		}
		n, err := count(app.ID)
		f.noErr(err)
		if n != 0 {
			t.Fatalf("a new application counts %d endpoints", n)
		}
		f.newEndpoint(app.ID)
		f.newEndpoint(app.ID, func(e *hookd.Endpoint) { e.Disabled, e.DisabledReason, e.DisabledAt = true, "manual", ptr(at(1)) })
		gone := f.newEndpoint(app.ID)
		f.newEndpoint(other.ID)
		f.write(func(tx hookd.Tx) error { return tx.DeleteEndpoint(f.ctx, gone.ID) })
		n, err = count(app.ID)
		f.noErr(err)
		if n != 2 {
			t.Fatalf("counted %d endpoints, want 2 (one enabled, one disabled; one deleted, one of another application)", n)
		}
		_, err = count(newID("app_"))
		f.isErr(err, hookd.ErrNotFound)
	}},
	{"LockEndpointCountHoldsOffAnotherTransaction", func(t *testing.T, f *fixture) {
		app := f.newApp()
		firstCounted := make(chan struct{})
		secondStarts := make(chan struct{})
		var second int
		var secondErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			<-firstCounted
			close(secondStarts)
			secondErr = f.writeErr(func(tx hookd.Tx) error {
				var err error
				second, err = tx.LockEndpointCount(f.ctx, app.ID)
				return err
			})
		})
		f.write(func(tx hookd.Tx) error {
			n, err := tx.LockEndpointCount(f.ctx, app.ID)
			if err != nil || n != 0 {
				t.Errorf("first count: %d, %v", n, err)
			}
			ep := hookd.Endpoint{ID: newID("ep_"), AppID: app.ID, URL: "https://receiver.example/q", Version: 1,
				Scheme: hookd.SchemeStandard, CreatedAt: at(1), UpdatedAt: at(1)}
			if err := tx.InsertEndpoint(f.ctx, &ep, hookd.SigningKey{Secret: "whsec_" + ep.ID, CreatedAt: at(1)}); err != nil {
				return err
			}
			close(firstCounted)
			<-secondStarts
			// The second transaction has begun (or waits to begin) and counts while this one
			// is still open: it must wait for the commit and see the endpoint.
			time.Sleep(100 * time.Millisecond)
			return nil
		})
		wg.Wait()
		f.noErr(secondErr)
		if second != 1 {
			t.Fatalf("the second transaction counted %d endpoints, want 1: it did not wait for the first's commit", second)
		}
	}},
	{"ConcurrentCreatesKeepTheQuota", func(t *testing.T, f *fixture) {
		c, err := hookd.NewClient(f.store, &hookd.Config{MaxEndpointsPerApp: 3})
		f.noErr(err)
		app, err := c.CreateApplication(f.ctx, &hookd.ApplicationIn{Name: "quota"})
		f.noErr(err)
		var mu sync.Mutex
		created, refused := 0, 0
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				_, err := c.CreateEndpoint(f.ctx, app.ID, &hookd.EndpointIn{URL: "https://receiver.example/c"})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case errors.Is(err, hookd.ErrTooManyEndpoints):
					refused++
				default:
					t.Errorf("create: %v", err)
				}
			})
		}
		wg.Wait()
		if created != 3 || refused != 9 {
			t.Fatalf("%d created and %d refused, want 3 and 9", created, refused)
		}
	}},
}
