package hookd_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

// bundle is what a test works with: a started client on a fresh SQLite file and a receiver.
type bundle struct {
	ctx    context.Context
	client *hookd.Client
	store  *sqlite.Store
	recv   *hookdtest.Receiver
	path   string
	app    *hookd.Application
	log    *logcheck.Log // the client's and the store's; checked for secrets when the test ends
}

// testConfig is a fast configuration: short timeout and schedule, 127.0.0.1 allowed.
func testConfig() *hookd.Config {
	return &hookd.Config{
		Delivery: &delivery.Config{
			Timeout:      300 * time.Millisecond,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond},
	}
}

func setup(t *testing.T, cfg *hookd.Config) *bundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	path := filepath.Join(t.TempDir(), "hookd.db")
	log := logcheck.New(t) // first, so that it is checked once the client and the store stopped
	store, err := sqlite.Open(ctx, path, &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	b := &bundle{ctx: ctx, store: store, recv: recv, path: path, log: log}
	// Registered first, so it runs after the client's Stop.
	t.Cleanup(func() {
		recv.Close()
		store.Close()
	})
	log.SecretsAtCleanup(t, store) // after the client's Stop, before the store closes
	b.client = b.start(t, cfg)
	app, err := b.client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	b.app = app
	return b
}

// start builds and starts a client on the bundle's store; it is stopped at cleanup. Without a
// logger of its own, the client logs to the bundle's.
func (b *bundle) start(t *testing.T, cfg *hookd.Config) *hookd.Client {
	t.Helper()
	if cfg == nil {
		cfg = testConfig()
	}
	if b.log == nil {
		b.log = logcheck.New(t)
	}
	b.log.Secret(cfg.MainKey, cfg.OperationalWebhookSecret)
	if cfg.Logger == nil {
		withLog := *cfg
		withLog.Logger = b.log.Logger()
		cfg = &withLog
	}
	c, err := hookd.NewClient(b.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Stop(ctx)
	})
	return c
}

// endpoint adds an endpoint at path served by h, and registers its secret with the receiver.
func (b *bundle) endpoint(t *testing.T, path string, h http.Handler, in *hookd.EndpointIn) *hookd.Endpoint {
	t.Helper()
	if in == nil {
		in = &hookd.EndpointIn{}
	}
	in.URL = b.recv.URL(path)
	ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		b.recv.Handle(path, h)
	}
	secret, err := b.client.EndpointSecret(b.ctx, b.app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(secret)
	if err := b.recv.SetSecret(path, secret); err != nil {
		t.Fatal(err)
	}
	return ep
}

func (b *bundle) send(t *testing.T, app string, in *hookd.MessageIn) *hookd.SendResult {
	t.Helper()
	if in.Payload == nil {
		in.Payload = map[string]any{"invoice": "in_1"}
	}
	res, err := b.client.Send(b.ctx, app, in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitStatus waits until the delivery of msg to ep has status, and returns it.
func (b *bundle) waitStatus(t *testing.T, msgID, epID string, status hookd.DeliveryStatus) *hookd.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := b.store.GetDeliveryFor(b.ctx, msgID, epID)
		if err == nil && d.Status == status {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery of %s to %s: %+v, %v; want status %s", msgID, epID, d, err, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *bundle) attempts(t *testing.T, msgID, epID string) []hookd.Attempt {
	t.Helper()
	page, err := b.store.ListAttempts(b.ctx, hookd.AttemptFilter{AppID: b.app.ID, MessageID: msgID, EndpointID: epID, ListOptions: hookd.ListOptions{Limit: 250}})
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first, for reading.
	out := page.Data
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func TestSignatureAndWebhookIDStableAcrossRetries(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/flaky", hookdtest.FailTimes(2, 503, "upstream busy"), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	if res.Deliveries != 1 || res.Duplicate {
		t.Fatalf("send = %+v", res)
	}
	d := b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	if d.Attempts != 3 {
		t.Errorf("attempts = %d, want 3", d.Attempts)
	}
	reqs := b.recv.Requests("/flaky")
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if !r.Verified {
			t.Errorf("request %d not verified by the official library: %v", i+1, r.VerifyErr)
		}
		if r.WebhookID != res.Message.ID {
			t.Errorf("request %d webhook-id = %q, want the message id %q", i+1, r.WebhookID, res.Message.ID)
		}
	}
	as := b.attempts(t, res.Message.ID, ep.ID)
	want := []int{503, 503, 200}
	if len(as) != 3 {
		t.Fatalf("attempt log has %d rows, want 3", len(as))
	}
	for i, a := range as {
		if a.Number != i+1 || a.StatusCode != want[i] || a.Trigger != hookd.TriggerScheduled {
			t.Errorf("attempt %d = number %d status %d trigger %s; want %d %d scheduled", i, a.Number, a.StatusCode, a.Trigger, i+1, want[i])
		}
	}
	if as[0].Response != "upstream busy" || as[0].Error != "HTTP 503" {
		t.Errorf("first attempt response %q error %q", as[0].Response, as[0].Error)
	}
}

func TestTimeoutRetriesThenFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/hang", hookdtest.Hang(), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	d := b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryFailed)
	if d.Attempts != 4 {
		t.Errorf("attempts = %d, want 4 (1 + 3 retries)", d.Attempts)
	}
	for _, a := range b.attempts(t, res.Message.ID, ep.ID) {
		if a.Error != "no response within 300ms" || a.StatusCode != 0 {
			t.Errorf("attempt %d: status %d error %q", a.Number, a.StatusCode, a.Error)
		}
	}
	ops, err := b.client.ListOperationalEvents(b.ctx, hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasOp(ops.Data, hookd.OpMessageAttemptExhausted, ep.ID) {
		t.Errorf("no %s event in %+v", hookd.OpMessageAttemptExhausted, ops.Data)
	}
}

func hasOp(evs []hookd.OperationalEvent, typ, epID string) bool {
	for _, e := range evs {
		if e.Type == typ && e.EndpointID == epID {
			return true
		}
	}
	return false
}

func TestGoneDisablesEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/gone", hookdtest.Gone("this endpoint was removed"), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	d := b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryCancelled)
	if d.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", d.Attempts)
	}
	got, err := b.client.GetEndpoint(b.ctx, "acme", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Disabled || !strings.Contains(got.DisabledReason, "410") {
		t.Errorf("endpoint disabled=%t reason %q", got.Disabled, got.DisabledReason)
	}
	ops, _ := b.client.ListOperationalEvents(b.ctx, hookd.ListOptions{})
	if !hasOp(ops.Data, hookd.OpEndpointDisabled, ep.ID) {
		t.Errorf("no endpoint.disabled event: %+v", ops.Data)
	}
	// A disabled endpoint takes no new message.
	if res2 := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"}); res2.Deliveries != 0 {
		t.Errorf("send to a disabled endpoint made %d deliveries", res2.Deliveries)
	}
}

func TestRedirectIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/moved", http.RedirectHandler("/target", http.StatusFound), nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryFailed)
	if n := len(b.recv.Requests("/target")); n != 0 {
		t.Fatalf("the redirect target was contacted %d times", n)
	}
	as := b.attempts(t, res.Message.ID, ep.ID)
	if len(as) != 4 || as[0].StatusCode != 302 || !strings.Contains(as[0].Error, "redirect") {
		t.Fatalf("attempts = %+v", as)
	}
}

func TestEndlessBodyIsCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		chunk := []byte(strings.Repeat("x", 1024))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	ep := b.endpoint(t, "/endless", endless, nil)
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
	as := b.attempts(t, res.Message.ID, ep.ID)
	if len(as) != 1 || len(as[0].Response) != 4096 || !as[0].Success {
		t.Fatalf("attempt: %d rows, response %d bytes", len(as), len(as[0].Response))
	}
}

func TestDuplicateEventID(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/ok", nil, nil)
	first := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: "evt-42"})
	second := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: "evt-42"})
	if first.Duplicate || !second.Duplicate || second.Message.ID != first.Message.ID || second.Deliveries != 0 {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	b.waitStatus(t, first.Message.ID, ep.ID, hookd.DeliveryDelivered)
	time.Sleep(100 * time.Millisecond)
	if n := len(b.recv.Requests("/ok")); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
}

func TestConcurrentSendsOfOneEventID(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.endpoint(t, "/ok", nil, nil)
	var wg sync.WaitGroup
	var fresh atomic.Int32
	ids := make(chan string, 10)
	for range 10 {
		wg.Go(func() {
			res, err := b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: "once", Payload: map[string]int{"n": 1}})
			if err != nil {
				t.Error(err)
				return
			}
			if !res.Duplicate {
				fresh.Add(1)
			}
			ids <- res.Message.ID
		})
	}
	wg.Wait()
	close(ids)
	first := ""
	for id := range ids {
		if first == "" {
			first = id
		}
		if id != first {
			t.Errorf("sends returned messages %s and %s", first, id)
		}
	}
	if fresh.Load() != 1 {
		t.Fatalf("%d sends wrote a message, want 1", fresh.Load())
	}
	page, _ := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if len(page.Data) != 1 {
		t.Fatalf("%d messages stored, want 1", len(page.Data))
	}
}

// Ids may hold ':' and '-': an application uid with a ':', and uids with '-' whose pairs would
// read alike if the delivery id joined them with it, each get their own deliveries.
func TestIDsWithColonAndHyphen(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "seven", UID: "acct:7"})
	if err != nil {
		t.Fatal(err)
	}
	b.app = app
	ep := b.endpoint(t, "/colon", nil, &hookd.EndpointIn{UID: "acct:7"})
	res := b.send(t, "acct:7", &hookd.MessageIn{EventType: "order.created", EventID: "order:1001"})
	b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)

	e1 := b.endpoint(t, "/customer", nil, &hookd.EndpointIn{UID: "customer"})
	e2 := b.endpoint(t, "/1-customer", nil, &hookd.EndpointIn{UID: "1-customer"})
	r1 := b.send(t, "acct:7", &hookd.MessageIn{EventType: "order.created", EventID: "order-1"})
	r2 := b.send(t, "acct:7", &hookd.MessageIn{EventType: "order.created", EventID: "order"})
	for _, r := range []*hookd.SendResult{r1, r2} {
		for _, e := range []*hookd.Endpoint{e1, e2} {
			b.waitStatus(t, r.Message.ID, e.ID, hookd.DeliveryDelivered)
		}
	}
	got, err := b.client.GetMessage(b.ctx, "acct:7", "order:1001")
	if err != nil || got.ID != res.Message.ID {
		t.Fatalf("get by event id: %v, %v", got, err)
	}
}

func TestRetryFiresOnTime(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RetrySchedule = []time.Duration{200 * time.Millisecond}
	b := setup(t, cfg)
	const n = 5
	eps := make([]*hookd.Endpoint, n)
	for i := range n {
		eps[i] = b.endpoint(t, "/r"+string(rune('a'+i)), hookdtest.FailTimes(1, 500, "no"), nil)
	}
	res := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	for i, ep := range eps {
		b.waitStatus(t, res.Message.ID, ep.ID, hookd.DeliveryDelivered)
		as := b.attempts(t, res.Message.ID, ep.ID)
		if len(as) != 2 {
			t.Fatalf("endpoint %d: %d attempts", i, len(as))
		}
		// From the end of the first attempt to the start of the second: 200 ms ± 20 % + 50 ms.
		gap := as[1].At.Sub(as[0].At.Add(as[0].Duration))
		if gap < 160*time.Millisecond || (gap > 290*time.Millisecond && !raceEnabled) {
			t.Errorf("endpoint %d: retry came %s after the failure, want 160ms to 290ms", i, gap)
		}
	}
}

func TestSendTxRollbackAndCommit(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/ok", nil, nil)
	db := b.store.DB()
	if _, err := db.ExecContext(b.ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	sendIn := func(id string) (*hookd.SendResult, func() error, func() error) {
		tx, err := db.BeginTx(b.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(b.ctx, `INSERT INTO orders (id) VALUES (?)`, id); err != nil {
			t.Fatal(err)
		}
		res, err := b.client.SendTx(b.ctx, tx, "acme", &hookd.MessageIn{EventType: "order.created", EventID: id, Payload: map[string]string{"order": id}})
		if err != nil {
			tx.Rollback()
			t.Fatal(err)
		}
		return res, tx.Commit, tx.Rollback
	}
	rolled, _, rollback := sendIn("o1")
	if err := rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.GetMessage(b.ctx, "acme", rolled.Message.ID); err == nil {
		t.Fatal("a rolled back message exists")
	}
	committed, commit, _ := sendIn("o2")
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	b.waitStatus(t, committed.Message.ID, ep.ID, hookd.DeliveryDelivered)
	var orders int
	db.QueryRowContext(b.ctx, `SELECT count(*) FROM orders`).Scan(&orders)
	if orders != 1 {
		t.Fatalf("%d orders, want 1", orders)
	}
	reqs := b.recv.Requests("/ok")
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "o2") {
		t.Fatalf("receiver got %d requests: %+v", len(reqs), reqs)
	}
}

func TestUnsupportedTx(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.client.SendTx(b.ctx, "not a tx", "acme", &hookd.MessageIn{EventType: "x", Payload: map[string]int{}})
	if err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("err = %v", err)
	}
}

// Concurrent Sends share a transaction; one that fails (an unknown application) fails alone.
func TestConcurrentSendsOneFailing(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ep := b.endpoint(t, "/ok", nil, nil)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	ids := make([]string, 20)
	for i := range 20 {
		wg.Go(func() {
			app := "acme"
			if i == 7 {
				app = "nobody"
			}
			res, err := b.client.Send(b.ctx, app, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": i}})
			errs[i] = err
			if err == nil {
				ids[i] = res.Message.ID
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			if !errors.Is(err, hookd.ErrNotFound) {
				t.Errorf("send to an unknown application: %v, want ErrNotFound", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("send %d: %v", i, err)
			continue
		}
		b.waitStatus(t, ids[i], ep.ID, hookd.DeliveryDelivered)
	}
	if n := len(b.recv.Requests("/ok")); n != 19 {
		t.Errorf("receiver got %d requests, want 19", n)
	}
}
