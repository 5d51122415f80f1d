package server

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

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
