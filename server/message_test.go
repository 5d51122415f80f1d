package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// mtFixture is an application with one endpoint on the test receiver.
type mtFixture struct {
	app    *hookd.Application
	ep     *hookd.Endpoint
	path   string
	secret string
}

// mtSetup creates, through the library, an application with uid and an endpoint at the
// receiver's path (answering with h; nil: 200), whose secret the receiver verifies with.
func mtSetup(t *testing.T, b *bundle, uid, path string, h http.Handler, mod func(*hookd.EndpointIn)) *mtFixture {
	t.Helper()
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "App " + uid, UID: uid})
	if err != nil {
		t.Fatal(err)
	}
	in := &hookd.EndpointIn{URL: b.recv.URL(path), UID: uid + "-ep"}
	if mod != nil {
		mod(in)
	}
	ep, err := b.client.CreateEndpoint(b.ctx, app.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := b.client.EndpointSecret(b.ctx, app.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.recv.SetSecret(path, secret); err != nil {
		t.Fatal(err)
	}
	if h != nil {
		b.recv.Handle(path, h)
	}
	return &mtFixture{app: app, ep: ep, path: path, secret: secret}
}

// mtStatus returns the HTTP status of an error of the Svix SDK.
func mtStatus(t *testing.T, err error) int {
	t.Helper()
	var se *svix.Error
	if !errors.As(err, &se) {
		t.Fatalf("want a *svix.Error, got %v", err)
	}
	return se.Status()
}

// mtJSON reads a response body as JSON, checking its Content-Type.
func mtJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q, body %s", ct, body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %s", body)
	}
	return v
}

// mtKeys returns the keys of a JSON object, sorted.
func mtKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mtVerify checks a request that arrived at the receiver with the Svix SDK's own verifier too.
func mtVerify(t *testing.T, secret string, req hookdtest.Request) {
	t.Helper()
	if !req.Verified {
		t.Fatalf("the receiver could not verify the delivery: %v", req.VerifyErr)
	}
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(req.Body, req.Header); err != nil {
		t.Fatalf("svix.Webhook.Verify: %v", err)
	}
}

func TestMessageCreateGetSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "acme", "/acme", nil, nil)

	payload := map[string]any{"invoice": "in_1", "amount": 4200.0}
	in := &svix.MessageIn{EventType: "invoice.paid", EventId: svix.String("evt-1"), Payload: payload, Channels: []string{"billing"}}
	out, err := b.svix.Message.Create(b.ctx, "acme", in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Id, "msg_") || out.GetEventId() != "evt-1" || out.EventType != "invoice.paid" ||
		!slices.Equal(out.Channels, []string{"billing"}) || out.Payload["invoice"] != "in_1" {
		t.Fatalf("created %+v", out)
	}
	if d := time.Since(out.Timestamp); d < 0 || d > time.Minute || out.Timestamp.Location() != time.UTC {
		t.Fatalf("timestamp %v", out.Timestamp)
	}

	// The same eventId again is a conflict, and sends nothing.
	_, err = b.svix.Message.Create(b.ctx, "acme", &svix.MessageIn{EventType: "invoice.paid", EventId: svix.String("evt-1"), Payload: payload})
	if got := mtStatus(t, err); got != http.StatusConflict {
		t.Fatalf("duplicate eventId: status %d, want 409", got)
	}

	reqs, err := b.recv.Wait(b.ctx, f.path, 1)
	if err != nil {
		t.Fatal(err)
	}
	mtVerify(t, f.secret, reqs[0])
	if reqs[0].WebhookID != out.Id {
		t.Fatalf("webhook-id %q, want %q", reqs[0].WebhookID, out.Id)
	}
	var got map[string]any
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil || got["invoice"] != "in_1" || got["amount"] != 4200.0 {
		t.Fatalf("delivered body %s", reqs[0].Body)
	}

	// By id and by eventId, and through the application's id as well as its uid.
	for _, ref := range [][2]string{{"acme", out.Id}, {"acme", "evt-1"}, {f.app.ID, "evt-1"}} {
		m, err := b.svix.Message.Get(b.ctx, ref[0], ref[1])
		if err != nil {
			t.Fatalf("get %v: %v", ref, err)
		}
		if m.Id != out.Id || m.Payload["amount"] != 4200.0 || !m.Timestamp.Equal(out.Timestamp) {
			t.Fatalf("get %v: %+v", ref, m)
		}
	}
	if _, err := b.svix.Message.Get(b.ctx, "acme", "evt-unknown"); mtStatus(t, err) != http.StatusNotFound {
		t.Fatalf("unknown message: %v", err)
	}

	// with_content=false leaves the payload out, in both generations.
	for _, gen := range []string{"1.44", ""} {
		resp := b.do(t, "GET", "/api/v1/app/acme/msg/evt-1?with_content=false", "", "X-Hookd-Api-Generation", gen)
		body := mtJSON(t, resp)
		if p, _ := body["payload"].(map[string]any); resp.StatusCode != 200 || p == nil || len(p) != 0 {
			t.Fatalf("with_content=false: %d %v", resp.StatusCode, body)
		}
		if want := []string{"channels", "eventId", "eventType", "id", "payload", "timestamp"}; !slices.Equal(mtKeys(body), want) {
			t.Fatalf("MessageOut keys %v, want %v", mtKeys(body), want)
		}
	}

	time.Sleep(100 * time.Millisecond)
	if n := len(b.recv.Requests(f.path)); n != 1 {
		t.Fatalf("%d deliveries, want 1 (the duplicate sends nothing)", n)
	}
}

func TestMessageListFiltersAndPagingSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	mtSetup(t, b, "lister", "/lister", nil, nil)

	type sent struct {
		id, eventType string
		channels      []string
		at            time.Time
	}
	var all []sent
	for i := range 7 {
		et := []string{"user.created", "user.deleted", "invoice.paid"}[i%3]
		var chs []string
		if i%2 == 0 {
			chs = []string{"even"}
		}
		m, err := b.svix.Message.Create(b.ctx, "lister", &svix.MessageIn{EventType: et, Payload: map[string]any{"i": i}, Channels: chs})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sent{m.Id, et, chs, m.Timestamp})
		time.Sleep(2 * time.Millisecond) // distinct timestamps for before/after
	}
	newestFirst := slices.Clone(all)
	slices.Reverse(newestFirst)
	ids := func(ms []sent, keep func(sent) bool) []string {
		var out []string
		for _, m := range ms {
			if keep(m) {
				out = append(out, m.id)
			}
		}
		return out
	}
	listAll := func(opts svix.MessageListOptions) []string {
		t.Helper()
		var out []string
		limit := int32(2)
		opts.Limit = &limit
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("too many pages")
			}
			page, err := b.svix.Message.List(b.ctx, "lister", &opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Data) > 2 {
				t.Fatalf("page of %d, limit 2", len(page.Data))
			}
			for _, m := range page.Data {
				out = append(out, m.Id)
			}
			if page.Done {
				return out
			}
			opts.Iterator = page.Iterator.Get()
		}
	}

	if got, want := listAll(svix.MessageListOptions{}), ids(newestFirst, func(sent) bool { return true }); !slices.Equal(got, want) {
		t.Fatalf("all: got %v, want %v", got, want)
	}
	users := []string{"user.created", "user.deleted"}
	got := listAll(svix.MessageListOptions{EventTypes: &users})
	if want := ids(newestFirst, func(m sent) bool { return strings.HasPrefix(m.eventType, "user.") }); !slices.Equal(got, want) {
		t.Fatalf("event_types: got %v, want %v", got, want)
	}
	got = listAll(svix.MessageListOptions{Channel: svix.String("even")})
	if want := ids(newestFirst, func(m sent) bool { return len(m.channels) > 0 }); !slices.Equal(got, want) {
		t.Fatalf("channel: got %v, want %v", got, want)
	}
	// With after, as in Svix, the first page is the oldest after the time and prevIterator walks
	// on to newer pages (until it is null), each newest first.
	after := all[3].at
	got = nil
	opts := svix.MessageListOptions{After: &after, Limit: svix.Int32(2)}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("too many pages")
		}
		page, err := b.svix.Message.List(b.ctx, "lister", &opts)
		if err != nil {
			t.Fatal(err)
		}
		var pageIDs []string
		for _, m := range page.Data {
			pageIDs = append(pageIDs, m.Id)
		}
		got = append(pageIDs, got...)
		if page.PrevIterator == nil {
			break
		}
		opts.Iterator = page.PrevIterator
	}
	if want := ids(newestFirst, func(m sent) bool { return !m.at.Before(after) }); !slices.Equal(got, want) {
		t.Fatalf("after: got %v, want %v", got, want)
	}
	before := all[3].at
	got = listAll(svix.MessageListOptions{Before: &before})
	if want := ids(newestFirst, func(m sent) bool { return m.at.Before(before) }); !slices.Equal(got, want) {
		t.Fatalf("before: got %v, want %v", got, want)
	}

	// prevIterator leads back to the page before.
	first, err := b.svix.Message.List(b.ctx, "lister", &svix.MessageListOptions{Limit: svix.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.svix.Message.List(b.ctx, "lister", &svix.MessageListOptions{Limit: svix.Int32(3), Iterator: first.Iterator.Get()})
	if err != nil {
		t.Fatal(err)
	}
	if second.PrevIterator == nil {
		t.Fatal("second page has no prevIterator")
	}
	back, err := b.svix.Message.List(b.ctx, "lister", &svix.MessageListOptions{Limit: svix.Int32(3), Iterator: second.PrevIterator})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Data) != 3 || back.Data[0].Id != first.Data[0].Id || back.Data[2].Id != first.Data[2].Id {
		t.Fatalf("the page before the second is not the first")
	}

	// An empty list still carries the iterator key (the Go SDK requires it).
	resp := b.do(t, "GET", "/api/v1/app/lister/msg?event_types=none.such", "")
	body := mtJSON(t, resp)
	if want := []string{"data", "done", "iterator", "prevIterator"}; !slices.Equal(mtKeys(body), want) || body["done"] != true {
		t.Fatalf("empty list %v", body)
	}
}

func TestMessageExpungeContentSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "expunge", "/expunge", nil, nil)
	m, err := b.svix.Message.Create(b.ctx, "expunge", &svix.MessageIn{EventType: "secret.leaked", EventId: svix.String("leak-1"), Payload: map[string]any{"ssn": "123"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.recv.Wait(b.ctx, f.path, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.svix.Message.ExpungeContent(b.ctx, "expunge", "leak-1"); err != nil {
		t.Fatal(err)
	}
	resp := b.do(t, "DELETE", "/api/v1/app/expunge/msg/"+m.Id+"/content", "")
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("second expunge: %d", resp.StatusCode)
	}
	got, err := b.svix.Message.Get(b.ctx, "expunge", m.Id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Payload) != 1 || got.Payload["expired"] != true {
		t.Fatalf("payload after expunge: %v", got.Payload)
	}
	stored, err := b.client.GetMessage(b.ctx, "expunge", m.Id)
	if err != nil || stored.Payload != nil {
		t.Fatalf("stored payload after expunge: %s, %v", stored.Payload, err)
	}
	// An expunged message cannot be resent: 400 missing_payload, as Svix answers.
	err = b.svix.MessageAttempt.Resend(b.ctx, "expunge", m.Id, f.ep.ID)
	if got := mtStatus(t, err); got != http.StatusBadRequest {
		t.Fatalf("resend of an expunged message: %d, want 400", got)
	}
	if err := b.svix.Message.ExpungeContent(b.ctx, "expunge", "msg_unknown"); mtStatus(t, err) != http.StatusNotFound {
		t.Fatalf("expunge unknown: %v", err)
	}
}

func TestMessageInlineApplication(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	body := `{"eventType":"user.created","payload":{"a":1},"application":{"name":"Fresh","uid":"fresh","throttleRate":5,"metadata":{"k":"v"}}}`
	resp := b.do(t, "POST", "/api/v1/app/fresh/msg", body)
	if out := mtJSON(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("inline application: %d %v", resp.StatusCode, out)
	}
	app, err := b.client.GetApplication(b.ctx, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if app.Name != "Fresh" || app.ThrottleRate != 5 || app.Metadata["k"] != "v" {
		t.Fatalf("created application %+v", app)
	}
	// Once it exists, application is ignored (and needs no uid).
	resp = b.do(t, "POST", "/api/v1/app/fresh/msg", `{"eventType":"user.created","payload":{},"application":{"name":"Other"}}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("second message: %d", resp.StatusCode)
	}
	if app, _ := b.client.GetApplication(b.ctx, "fresh"); app.Name != "Fresh" {
		t.Fatalf("application changed: %+v", app)
	}
	msgs, err := b.client.ListMessages(b.ctx, "fresh", hookd.MessageFilter{})
	if err != nil || len(msgs.Data) != 2 {
		t.Fatalf("messages %v, %v", msgs, err)
	}
}

// mtAuth is staticAuth whose app-portal tokens can be added while the server runs.
type mtAuth struct {
	mu   sync.Mutex
	apps map[string]string
}

func (a *mtAuth) add(token, appID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apps[token] = appID
}

func (a *mtAuth) Authenticate(ctx context.Context, token string) (Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return staticAuth{apps: a.apps}.Authenticate(ctx, token)
}

func TestMessageAppPortalToken(t *testing.T) {
	t.Parallel()
	auth := &mtAuth{apps: map[string]string{}}
	b := setup(t, auth)
	own := mtSetup(t, b, "own", "/own", nil, nil)
	mtSetup(t, b, "other", "/other", nil, nil)
	auth.add("portal-own", own.app.ID)
	m, err := b.client.Send(b.ctx, "other", &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/app/own/msg", http.StatusOK},
		{"POST", "/api/v1/app/own/msg", http.StatusAccepted},
		{"GET", "/api/v1/app/other/msg", http.StatusForbidden},
		{"POST", "/api/v1/app/other/msg", http.StatusForbidden},
		{"GET", "/api/v1/app/other/msg/" + m.Message.ID, http.StatusForbidden},
		{"DELETE", "/api/v1/app/other/msg/" + m.Message.ID + "/content", http.StatusForbidden},
		{"GET", "/api/v1/app/other/attempt/endpoint/other-ep", http.StatusForbidden},
		{"GET", "/api/v1/app/other/attempt/msg/" + m.Message.ID, http.StatusForbidden},
		{"GET", "/api/v1/app/other/msg/" + m.Message.ID + "/endpoint", http.StatusForbidden},
		{"GET", "/api/v1/app/other/endpoint/other-ep/msg", http.StatusForbidden},
		{"POST", "/api/v1/app/other/msg/" + m.Message.ID + "/endpoint/other-ep/resend", http.StatusForbidden},
		// An application that does not exist is not created for a portal token.
		{"POST", "/api/v1/app/newapp/msg", http.StatusNotFound},
	} {
		body := ""
		if c.method == "POST" {
			body = `{"eventType":"a.b","payload":{},"application":{"name":"N","uid":"newapp"}}`
		}
		resp := b.do(t, c.method, c.path, body, "Authorization", "Bearer portal-own")
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

func TestMessageEventIDRaceAndIdempotencyKey(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "race", "/race", nil, nil)
	const n = 8
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := b.svix.Message.Create(b.ctx, "race", &svix.MessageIn{EventType: "a.b", EventId: svix.String("once"), Payload: map[string]any{}})
			if err == nil {
				codes <- http.StatusAccepted
				return
			}
			var se *svix.Error
			if errors.As(err, &se) {
				codes <- se.Status()
				return
			}
			codes <- 0
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[http.StatusAccepted] != 1 || count[http.StatusConflict] != n-1 {
		t.Fatalf("statuses %v: want one 202 and %d 409", count, n-1)
	}
	if _, err := b.recv.Wait(b.ctx, f.path, 1); err != nil {
		t.Fatal(err)
	}

	// A retry under the same Idempotency-Key replays the first answer instead of a 409.
	body := `{"eventType":"a.b","eventId":"keyed","payload":{"k":1}}`
	first := b.do(t, "POST", "/api/v1/app/race/msg", body, "Idempotency-Key", "key-1")
	firstOut := mtJSON(t, first)
	again := b.do(t, "POST", "/api/v1/app/race/msg", body, "Idempotency-Key", "key-1")
	againOut := mtJSON(t, again)
	if first.StatusCode != http.StatusAccepted || again.StatusCode != http.StatusAccepted || firstOut["id"] != againOut["id"] {
		t.Fatalf("first %d %v, replay %d %v", first.StatusCode, firstOut, again.StatusCode, againOut)
	}
	other := b.do(t, "POST", "/api/v1/app/race/msg", body, "Idempotency-Key", "key-2")
	if other.StatusCode != http.StatusConflict {
		t.Fatalf("same eventId under another key: %d, want 409", other.StatusCode)
	}
	time.Sleep(100 * time.Millisecond)
	if got := len(b.recv.Requests(f.path)); got != 2 {
		t.Fatalf("%d deliveries, want 2", got)
	}
}

func TestMessageRawPayloadSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "raw", "/raw", nil, nil)
	contentType := *svix.NullableString(nil)
	contentType.Unset()
	const raw = `{"b": 2,   "a": [1, 2]}`
	in := svix.NewMessageInRaw("raw.one", raw, contentType)
	m, err := b.svix.Message.Create(b.ctx, "raw", in)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := b.recv.Wait(b.ctx, f.path, 1)
	if err != nil {
		t.Fatal(err)
	}
	mtVerify(t, f.secret, reqs[0])
	if string(reqs[0].Body) != raw {
		t.Fatalf("delivered %q, want the raw payload %q", reqs[0].Body, raw)
	}
	if m.Payload["b"] != 2.0 {
		t.Fatalf("payload %v", m.Payload)
	}
}
