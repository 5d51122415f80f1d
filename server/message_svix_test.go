package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

// mtField is the last element of a 422's first loc.
func mtField(t *testing.T, body map[string]any) any {
	t.Helper()
	detail, ok := body["detail"].([]any)
	if !ok || len(detail) == 0 {
		t.Fatalf("422 without a detail list: %v", body)
	}
	loc := detail[0].(map[string]any)["loc"].([]any)
	return loc[len(loc)-1]
}

// TestMessageDataAlias: the payload may come as data, as Svix's server reads it; both at once is
// a 422 naming payload, and nothing is stored.
func TestMessageDataAlias(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	mtSetup(t, b, "alias", "/alias", nil, nil)

	resp := b.do(t, "POST", "/api/v1/app/alias/msg", `{"eventType":"a.b","eventId":"by-data","data":{"k":"v"}}`)
	body := mtJSON(t, resp)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("data alias: %d %v", resp.StatusCode, body)
	}
	if p, _ := body["payload"].(map[string]any); p["k"] != "v" {
		t.Fatalf("data alias: payload %v", body["payload"])
	}
	m, err := b.client.GetMessage(b.ctx, "alias", "by-data")
	if err != nil || string(m.Payload) != `{"k":"v"}` {
		t.Fatalf("stored payload %s, %v", m.Payload, err)
	}
	reqs, err := b.recv.Wait(b.ctx, "/alias", 1)
	if err != nil || string(reqs[0].Body) != `{"k":"v"}` {
		t.Fatalf("delivered %v, %v", reqs, err)
	}

	for _, c := range []struct{ name, body, field string }{
		{"both payload and data", `{"eventType":"a.b","payload":{},"data":{}}`, "payload"},
		{"data not an object", `{"eventType":"a.b","data":[1]}`, "payload"},
		{"null data", `{"eventType":"a.b","data":null}`, "payload"},
	} {
		resp := b.do(t, "POST", "/api/v1/app/alias/msg", c.body)
		body := mtJSON(t, resp)
		if resp.StatusCode != http.StatusUnprocessableEntity || mtField(t, body) != c.field {
			t.Fatalf("%s: %d %v", c.name, resp.StatusCode, body)
		}
	}
	page, err := b.client.ListMessages(b.ctx, "alias", hookd.MessageFilter{})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("%d messages, want 1 (%v)", len(page.Data), err)
	}
}

// TestMessageEventIDPrefix: an eventId of the message id's own prefix is refused, as Svix refuses
// a uid of its kind's prefix; other ids' prefixes are fine for an eventId.
func TestMessageEventIDPrefix(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	mtSetup(t, b, "pfx", "/pfx", nil, nil)
	resp := b.do(t, "POST", "/api/v1/app/pfx/msg", `{"eventType":"a.b","eventId":"msg_abc","payload":{}}`)
	body := mtJSON(t, resp)
	if resp.StatusCode != http.StatusUnprocessableEntity || mtField(t, body) != "eventId" {
		t.Fatalf("eventId msg_abc: %d %v", resp.StatusCode, body)
	}
	page, err := b.client.ListMessages(b.ctx, "pfx", hookd.MessageFilter{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("%d messages stored, want 0 (%v)", len(page.Data), err)
	}
	resp = b.do(t, "POST", "/api/v1/app/pfx/msg", `{"eventType":"a.b","eventId":"ep_abc","payload":{}}`)
	if body := mtJSON(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("eventId ep_abc: %d %v", resp.StatusCode, body)
	}
}

// TestListIteratorKinds: each list's iterator must be an id of the listed kind (event types page
// by name), with or without the prev "-", else 422 naming iterator.
func TestListIteratorKinds(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "kinds", "/kinds", nil, nil)
	res, err := b.client.Send(b.ctx, "kinds", &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Message.ID
	lists := []struct {
		path, good, bad string
	}{
		{"/api/v1/app", "app_x", "ep_x"},
		{"/api/v1/app/kinds/endpoint", "ep_x", "app_x"},
		{"/api/v1/app/kinds/msg", "msg_x", "atmpt_x"},
		{"/api/v1/app/kinds/attempt/endpoint/" + f.ep.ID, "atmpt_x", "msg_x"},
		{"/api/v1/app/kinds/attempt/msg/" + msg, "atmpt_x", "ep_x"},
		{"/api/v1/event-type", "a.b", "a/b"},
	}
	for _, l := range lists {
		for _, it := range []string{l.good, "-" + l.good} {
			resp := b.do(t, "GET", l.path+"?iterator="+url.QueryEscape(it), "")
			if body := mtJSON(t, resp); resp.StatusCode != http.StatusOK {
				t.Errorf("%s iterator %s: %d %v", l.path, it, resp.StatusCode, body)
			}
		}
		for _, it := range []string{l.bad, "-" + l.bad, "-", "\x00\xff"} {
			resp := b.do(t, "GET", l.path+"?iterator="+url.QueryEscape(it), "")
			body := mtJSON(t, resp)
			if resp.StatusCode != http.StatusUnprocessableEntity || mtField(t, body) != "iterator" {
				t.Errorf("%s iterator %q: %d %v", l.path, it, resp.StatusCode, body)
			}
		}
	}
}

// TestListAfterPagesFromTheTime: with after, the message and attempt lists return the page right
// after that time (newest first within it), not the newest page, and its prevIterator walks on in
// time, so a sync with after misses nothing.
func TestListAfterPagesFromTheTime(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "after", "/after", nil, nil)
	var msgs []*hookd.Message
	for i := range 5 {
		res, err := b.client.Send(b.ctx, "after", &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, res.Message)
		// One delivery at a time, so that the attempts are made in the messages' order.
		mtEventually(t, "the delivery", func() bool { return len(b.recv.Requests("/after")) == i+1 })
		time.Sleep(time.Millisecond) // distinct timestamps
	}
	since := url.QueryEscape(msgs[1].CreatedAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano))
	ids := func(body map[string]any) []string {
		var out []string
		for _, d := range body["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	resp := b.do(t, "GET", "/api/v1/app/after/msg?limit=2&after="+since, "")
	body := mtJSON(t, resp)
	if got, want := ids(body), []string{msgs[2].ID, msgs[1].ID}; !slices.Equal(got, want) || body["done"] != false {
		t.Fatalf("messages after: %v, want %v (%v)", got, want, body)
	}
	resp = b.do(t, "GET", "/api/v1/app/after/msg?limit=2&after="+since+"&iterator="+url.QueryEscape(body["prevIterator"].(string)), "")
	body = mtJSON(t, resp)
	if got, want := ids(body), []string{msgs[4].ID, msgs[3].ID}; !slices.Equal(got, want) {
		t.Fatalf("messages after, next in time: %v, want %v (%v)", got, want, body)
	}

	var all []hookd.Attempt
	mtEventually(t, "five attempts recorded", func() bool {
		page, err := b.client.ListAttempts(b.ctx, "after", hookd.AttemptFilter{EndpointID: f.ep.ID})
		if err != nil {
			t.Fatal(err)
		}
		all = page.Data
		return len(all) == 5
	})
	slices.Reverse(all) // oldest first
	from := url.QueryEscape(all[1].At.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano))
	resp = b.do(t, "GET", "/api/v1/app/after/attempt/endpoint/"+f.ep.ID+"?limit=2&after="+from, "")
	body = mtJSON(t, resp)
	if got, want := ids(body), []string{all[2].ID, all[1].ID}; !slices.Equal(got, want) {
		t.Fatalf("attempts after: %v, want %v (%v)", got, want, body)
	}
}

// TestMessageTags: tags are stored without repeats, returned on MessageOut, and filter the
// message list and the attempted-messages list; bad tags are a 422 naming tags (or tag, in the
// query), and nothing is stored.
func TestMessageTags(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "tags", "/tags", nil, nil)
	resp := b.do(t, "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":["x","b/c#1\\d","x"]}`)
	body := mtJSON(t, resp)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("create with tags: %d %v", resp.StatusCode, body)
	}
	tagged := body["id"].(string)
	if got := body["tags"]; len(got.([]any)) != 2 || got.([]any)[0] != "x" || got.([]any)[1] != `b/c#1\d` {
		t.Fatalf("tags out: %v", got)
	}
	plain, err := b.svix.Message.Create(b.ctx, "tags", &svix.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	resp = b.do(t, "GET", "/api/v1/app/tags/msg/"+plain.Id, "")
	if body := mtJSON(t, resp); body["tags"] != nil {
		t.Fatalf("a message without tags shows tags %v", body["tags"])
	}
	listIDs := func(path string) []string {
		resp := b.do(t, "GET", path, "")
		body := mtJSON(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, body)
		}
		var out []string
		for _, d := range body["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := listIDs("/api/v1/app/tags/msg?tag=x"); !slices.Equal(got, []string{tagged}) {
		t.Fatalf("list by tag: %v, want [%s]", got, tagged)
	}
	if got := listIDs("/api/v1/app/tags/msg?tag=" + url.QueryEscape(`b/c#1\d`)); !slices.Equal(got, []string{tagged}) {
		t.Fatalf("list by the other tag: %v", got)
	}
	if got := listIDs("/api/v1/app/tags/msg?tag=none"); len(got) != 0 {
		t.Fatalf("list by an unknown tag: %v", got)
	}
	mtEventually(t, "both delivered", func() bool { return len(b.recv.Requests("/tags")) == 2 })
	if got := listIDs("/api/v1/app/tags/endpoint/" + f.ep.ID + "/msg?tag=x"); !slices.Equal(got, []string{tagged}) {
		t.Fatalf("attempted messages by tag: %v", got)
	}

	for _, c := range []struct{ name, method, path, body, field string }{
		{"six tags", "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":["a","b","c","d","e","f"]}`, "tags"},
		{"tag with a space", "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":["a b"]}`, "tags"},
		{"empty tag", "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":[""]}`, "tags"},
		{"tag too long", "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":["` + strings.Repeat("t", 129) + `"]}`, "tags"},
		{"tags a string", "POST", "/api/v1/app/tags/msg", `{"eventType":"a.b","payload":{},"tags":"a"}`, "tags"},
		{"bad tag filter", "GET", "/api/v1/app/tags/msg?tag=a%20b", "", "tag"},
		{"bad tag filter, attempted messages", "GET", "/api/v1/app/tags/endpoint/" + f.ep.ID + "/msg?tag=a%20b", "", "tag"},
	} {
		resp := b.do(t, c.method, c.path, c.body)
		body := mtJSON(t, resp)
		if resp.StatusCode != http.StatusUnprocessableEntity || mtField(t, body) != c.field {
			t.Fatalf("%s: %d %v", c.name, resp.StatusCode, body)
		}
	}
	if page, err := b.client.ListMessages(b.ctx, "tags", hookd.MessageFilter{}); err != nil || len(page.Data) != 2 {
		t.Fatalf("%d messages after bad input, want 2 (%v)", len(page.Data), err)
	}
}

// mtClock is a settable clock.
type mtClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *mtClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *mtClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestMessagePayloadRetention: payloadRetentionPeriod (days, 5 to 90, default 90) or
// payloadRetentionHours (1 to 2160) sets when the payload expires; past it the sweep deletes it,
// GET shows {"expired":true}, and a resend is Svix's 400 missing_payload. A second API on the
// test's store runs on a settable clock; its client is not started, the test sweeps.
func TestMessagePayloadRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "keep", "/keep", nil, nil)
	clk := &mtClock{now: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)} // past the started client's sweeps
	client, err := hookd.NewClient(b.store, &hookd.Config{Now: clk.Now, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(client, &Config{Auth: staticAuth{}, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(b.ctx, "POST", srv.URL+"/api/v1/app/keep/msg", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp.StatusCode, mtJSON(t, resp)
	}
	created := clk.Now()
	send := func(retention string) string {
		status, body := post(`{"eventType":"a.b","payload":{"k":1}` + retention + `}`)
		if status != http.StatusAccepted {
			t.Fatalf("create with %s: %d %v", retention, status, body)
		}
		return body["id"].(string)
	}
	hours := send(`,"payloadRetentionHours":1`)
	days := send(`,"payloadRetentionPeriod":5`)
	dflt := send(``)
	for id, want := range map[string]time.Duration{hours: time.Hour, days: 5 * 24 * time.Hour, dflt: 90 * 24 * time.Hour} {
		m, err := client.GetMessage(b.ctx, "keep", id)
		if err != nil || m.PayloadExpiresAt == nil || !m.PayloadExpiresAt.Equal(created.Add(want)) {
			t.Fatalf("expiry of %s: %v, want %v (%v)", id, m.PayloadExpiresAt, created.Add(want), err)
		}
	}

	payload := func(id string) any {
		resp := b.do(t, "GET", "/api/v1/app/keep/msg/"+id, "")
		return mtJSON(t, resp)["payload"]
	}
	clk.Add(2 * time.Hour)
	if n, err := client.ExpirePayloads(b.ctx); err != nil || n != 1 {
		t.Fatalf("sweep after two hours: %d, %v", n, err)
	}
	if p, _ := payload(hours).(map[string]any); len(p) != 1 || p["expired"] != true {
		t.Fatalf("expired payload shows %v", payload(hours))
	}
	if p, _ := payload(days).(map[string]any); p["k"] != float64(1) {
		t.Fatalf("unexpired payload shows %v", payload(days))
	}
	err = b.svix.MessageAttempt.Resend(b.ctx, "keep", hours, f.ep.ID)
	if got := mtStatus(t, err); got != http.StatusBadRequest {
		t.Fatalf("resend of an expired message: %d, want 400", got)
	}
	resp := b.do(t, "POST", "/api/v1/app/keep/msg/"+hours+"/endpoint/"+f.ep.ID+"/resend", "")
	if body := mtJSON(t, resp); body["code"] != "missing_payload" {
		t.Fatalf("resend of an expired message: %v", body)
	}
	clk.Add(5 * 24 * time.Hour)
	if n, err := client.ExpirePayloads(b.ctx); err != nil || n != 1 {
		t.Fatalf("sweep after five days: %d, %v", n, err)
	}
	if p, _ := payload(dflt).(map[string]any); p["k"] != float64(1) {
		t.Fatalf("payload of the default retention shows %v", payload(dflt))
	}

	before, _ := client.ListMessages(b.ctx, "keep", hookd.MessageFilter{})
	for _, c := range []struct{ name, body, field string }{
		{"hours 0", `,"payloadRetentionHours":0`, "payloadRetentionHours"},
		{"hours over 2160", `,"payloadRetentionHours":2161`, "payloadRetentionHours"},
		{"days 4", `,"payloadRetentionPeriod":4`, "payloadRetentionPeriod"},
		{"days 91", `,"payloadRetentionPeriod":91`, "payloadRetentionPeriod"},
		{"days and hours", `,"payloadRetentionPeriod":5,"payloadRetentionHours":1`, "payloadRetentionHours"},
	} {
		status, body := post(`{"eventType":"a.b","payload":{}` + c.body + `}`)
		if status != http.StatusUnprocessableEntity || mtField(t, body) != c.field {
			t.Fatalf("%s: %d %v", c.name, status, body)
		}
	}
	if after, _ := client.ListMessages(b.ctx, "keep", hookd.MessageFilter{}); len(after.Data) != len(before.Data) {
		t.Fatalf("bad retention stored a message: %d, then %d", len(before.Data), len(after.Data))
	}
}
