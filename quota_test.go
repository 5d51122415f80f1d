package hookd_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// An application has at most MaxEndpointsPerApp endpoints; another application is not affected,
// and deleting one makes room again.
func TestMaxEndpointsPerApp(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MaxEndpointsPerApp = 3
	b := setup(t, cfg)
	var eps []*hookd.Endpoint
	for range 3 {
		eps = append(eps, b.endpoint(t, "/ok", nil, nil))
	}
	if err := b.client.SetEndpointDisabled(b.ctx, b.app.ID, eps[0].ID, true, ""); err != nil {
		t.Fatal(err)
	}
	_, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/fourth")})
	var le *hookd.EndpointLimitError
	if !errors.Is(err, hookd.ErrTooManyEndpoints) || !errors.As(err, &le) || le.Max != 3 || le.App != b.app.ID {
		t.Fatalf("a fourth endpoint (one of three disabled): %v, want an EndpointLimitError of 3", err)
	}
	page, err := b.client.ListEndpoints(b.ctx, "acme", hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 3 {
		t.Fatalf("%d endpoints after a refused create, want 3", len(page.Data))
	}

	other, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CreateEndpoint(b.ctx, other.ID, &hookd.EndpointIn{URL: b.recv.URL("/other")}); err != nil {
		t.Fatalf("another application's endpoint: %v", err)
	}
	if err := b.client.DeleteEndpoint(b.ctx, "acme", eps[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/again")}); err != nil {
		t.Fatalf("an endpoint after a delete: %v", err)
	}
}

// The default bound is DefaultMaxEndpointsPerApp; a negative one is no bound.
func TestMaxEndpointsPerAppDefaultAndNone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		max   int
		allow int // endpoints created before the refusal; -1: none refused
	}{
		{"default", 0, hookd.DefaultMaxEndpointsPerApp},
		{"none", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig()
			cfg.MaxEndpointsPerApp = tc.max
			b := setup(t, cfg)
			for i := range hookd.DefaultMaxEndpointsPerApp + 1 {
				_, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/e")})
				if i == tc.allow {
					if !errors.Is(err, hookd.ErrTooManyEndpoints) {
						t.Fatalf("endpoint %d: %v, want ErrTooManyEndpoints", i+1, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("endpoint %d: %v", i+1, err)
				}
			}
			if tc.allow >= 0 {
				t.Fatalf("no endpoint refused, want the %dth", tc.allow+1)
			}
		})
	}
}

// Concurrent creates cannot both take the last place.
func TestMaxEndpointsPerAppConcurrentCreates(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MaxEndpointsPerApp = 4
	b := setup(t, cfg)
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			_, err := b.client.CreateEndpoint(b.ctx, "acme", &hookd.EndpointIn{URL: b.recv.URL("/c")})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, hookd.ErrTooManyEndpoints):
				refused.Add(1)
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 4 || refused.Load() != 12 {
		t.Fatalf("%d created and %d refused, want 4 and 12", ok.Load(), refused.Load())
	}
}

// offsetClock is the real time plus an offset that a test moves forward.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// An application sends at most MessageBurstPerApp messages at once and then MessageRatePerApp a
// second; a refused send writes nothing and says when to retry; another application has a
// bucket of its own. Send, SendTx and SendToEndpoint all count.
func TestMessageRatePerApp(t *testing.T) {
	t.Parallel()
	clock := &offsetClock{}
	cfg := testConfig()
	// One message per 100 s: the real time the test takes refills no whole message.
	cfg.MessageRatePerApp, cfg.MessageBurstPerApp, cfg.Now = 0.01, 3, clock.now
	b := setup(t, cfg)
	ep := b.endpoint(t, "/ok", nil, nil)

	b.send(t, "acme", &hookd.MessageIn{EventType: "a"})
	if _, err := b.client.SendToEndpoint(b.ctx, "acme", ep.ID, &hookd.MessageIn{EventType: "b", Payload: map[string]int{}}); err != nil {
		t.Fatal(err)
	}
	tx, err := b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.SendTx(b.ctx, tx, "acme", &hookd.MessageIn{EventType: "c", Payload: map[string]int{}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var rl *hookd.RateLimitError
		if !errors.Is(err, hookd.ErrRateLimited) || !errors.As(err, &rl) {
			t.Fatalf("%s past the burst: %v, want a RateLimitError", what, err)
		}
		if rl.RetryAfter < 90*time.Second || rl.RetryAfter > 100*time.Second || rl.App != b.app.ID || rl.Rate != 0.01 {
			t.Fatalf("%s: %+v, want RetryAfter about 100 s for %s at 0.01/s", what, rl, b.app.ID)
		}
	}
	_, err = b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "d", EventID: "refused", Payload: map[string]int{}})
	refused("Send", err)
	_, err = b.client.SendToEndpoint(b.ctx, b.app.ID, ep.ID, &hookd.MessageIn{EventType: "d", Payload: map[string]int{}})
	refused("SendToEndpoint", err)
	tx, err = b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.SendTx(b.ctx, tx, "acme", &hookd.MessageIn{EventType: "d", Payload: map[string]int{}})
	refused("SendTx", err)
	tx.Rollback()
	page, err := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 3 {
		t.Fatalf("%d messages, want the 3 admitted", len(page.Data))
	}

	other, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Other", UID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	b.send(t, other.ID, &hookd.MessageIn{EventType: "a"})

	// A bucket refills at the rate: 100 s later, one more message, and only one.
	clock.advance(100 * time.Second)
	if res := b.send(t, "acme", &hookd.MessageIn{EventType: "e", EventID: "refused"}); res.Duplicate {
		t.Fatal("the refused send's event id was taken")
	}
	_, err = b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "f", Payload: map[string]int{}})
	refused("Send after one refill", err)
}

// Concurrent sends are written in shared transactions; those past the rate are refused alone, and
// the others are written and delivered.
func TestMessageRatePerAppConcurrentSends(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MessageRatePerApp, cfg.MessageBurstPerApp = 0.01, 5
	b := setup(t, cfg)
	ep := b.endpoint(t, "/ok", nil, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent []string
	refused := 0
	for i := range 20 {
		wg.Go(func() {
			res, err := b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "x", Payload: map[string]int{"n": i}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				sent = append(sent, res.Message.ID)
			case errors.Is(err, hookd.ErrRateLimited):
				refused++
			default:
				t.Errorf("send %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(sent) != 5 || refused != 15 {
		t.Fatalf("%d sent and %d refused, want 5 and 15", len(sent), refused)
	}
	for _, id := range sent {
		b.waitStatus(t, id, ep.ID, hookd.DeliveryDelivered)
	}
}

// Without MessageRatePerApp (the library's default) sends are not counted.
func TestMessageRatePerAppDefaultIsNone(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for range 50 {
		b.send(t, "acme", &hookd.MessageIn{EventType: "x"})
	}
}

func TestMessageRateConfigChecks(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, cfg := range []*hookd.Config{
		{MessageRatePerApp: -1},
		{MessageRatePerApp: 10, MessageBurstPerApp: -1},
	} {
		if _, err := hookd.NewClient(b.store, cfg); err == nil {
			t.Errorf("NewClient(%+v) accepted", cfg)
		}
	}
}

// A batch that fails (one send names an unknown application) is written again a send at a time;
// the sends it held are not counted twice, so a burst of exactly their number lets them all in.
func TestMessageRatePerAppBatchWrittenAgain(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		cfg := testConfig()
		cfg.MessageRatePerApp, cfg.MessageBurstPerApp = 0.01, 12
		b := setup(t, cfg)
		var wg sync.WaitGroup
		errs := make([]error, 13)
		for i := range 13 {
			wg.Go(func() {
				app := "acme"
				if i == 6 {
					app = "nobody"
				}
				_, errs[i] = b.client.Send(b.ctx, app, &hookd.MessageIn{EventType: "x", Payload: map[string]int{"n": i}})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if i == 6 {
				if !errors.Is(err, hookd.ErrNotFound) {
					t.Fatalf("round %d: the send to an unknown application: %v", round, err)
				}
			} else if err != nil {
				t.Fatalf("round %d: send %d: %v (the burst of 12 holds every send to acme)", round, i, err)
			}
		}
	}
}
