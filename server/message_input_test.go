package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

func TestMessageAndAttemptBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "bad", "/bad", nil, nil)
	res, err := b.client.Send(b.ctx, "bad", &hookd.MessageIn{EventType: "a.b", EventID: "known", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Message.ID
	mtEventually(t, "the attempt recorded", func() bool { return len(mtAttempts(t, b, "bad", msg, nil)) == 1 })
	disabled, err := b.client.CreateEndpoint(b.ctx, "bad", &hookd.EndpointIn{URL: b.recv.URL("/off"), UID: "off", Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Other", UID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	otherMsg, err := b.client.Send(b.ctx, other.ID, &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}

	const create = "/api/v1/app/bad/msg"
	tooLong := strings.Repeat("x", 257)
	cases := []struct {
		name, method, path, body string
		want                     int
		field                    string // the field a 422 names
	}{
		{"malformed JSON", "POST", create, `{"eventType":`, 400, ""},
		{"not JSON", "POST", create, `eventType=a`, 400, ""},
		{"empty body", "POST", create, ``, 422, ""},
		{"array body", "POST", create, `[]`, 422, ""},
		{"eventType a number", "POST", create, `{"eventType":5,"payload":{}}`, 422, "eventType"},
		{"missing eventType", "POST", create, `{"payload":{}}`, 422, "eventType"},
		{"empty eventType", "POST", create, `{"eventType":"","payload":{}}`, 422, "eventType"},
		{"eventType with a space", "POST", create, `{"eventType":"a b","payload":{}}`, 422, "eventType"},
		{"eventType too long", "POST", create, `{"eventType":"` + tooLong + `","payload":{}}`, 422, "eventType"},
		{"missing payload", "POST", create, `{"eventType":"a.b"}`, 422, "payload"},
		{"null payload", "POST", create, `{"eventType":"a.b","payload":null}`, 422, "payload"},
		{"string payload", "POST", create, `{"eventType":"a.b","payload":"hi"}`, 422, "payload"},
		{"array payload", "POST", create, `{"eventType":"a.b","payload":[{"a":1}]}`, 422, "payload"},
		{"number payload", "POST", create, `{"eventType":"a.b","payload":1}`, 422, "payload"},
		{"eventId with a colon", "POST", create, `{"eventType":"a.b","eventId":"a:b","payload":{}}`, 422, "eventId"},
		{"empty eventId", "POST", create, `{"eventType":"a.b","eventId":"","payload":{}}`, 422, "eventId"},
		{"eventId too long", "POST", create, `{"eventType":"a.b","eventId":"` + tooLong + `","payload":{}}`, 422, "eventId"},
		{"eventId a number", "POST", create, `{"eventType":"a.b","eventId":7,"payload":{}}`, 422, "eventId"},
		{"channels a string", "POST", create, `{"eventType":"a.b","channels":"x","payload":{}}`, 422, "channels"},
		{"no channels", "POST", create, `{"eventType":"a.b","channels":[],"payload":{}}`, 422, "channels"},
		{"six channels", "POST", create, `{"eventType":"a.b","channels":["a","b","c","d","e","f"],"payload":{}}`, 422, "channels"},
		{"bad channel", "POST", create, `{"eventType":"a.b","channels":["a/b"],"payload":{}}`, 422, "channels"},
		{"retention too short", "POST", create, `{"eventType":"a.b","payloadRetentionPeriod":1,"payload":{}}`, 422, "payloadRetentionPeriod"},
		{"retention a string", "POST", create, `{"eventType":"a.b","payloadRetentionPeriod":"x","payload":{}}`, 422, "payloadRetentionPeriod"},
		{"payload 129 levels deep", "POST", create, `{"eventType":"a.b","payload":` + nestedPayload(129) + `}`, 422, "payload"},
		{"payload 9,000 levels deep", "POST", create, `{"eventType":"a.b","payload":` + nestedPayload(9000) + `}`, 422, "payload"},
		{"raw payload 129 levels deep", "POST", create, `{"eventType":"a.b","payload":{},"transformationsParams":{"rawPayload":` +
			strconv.Quote(nestedPayload(129)) + `}}`, 422, "transformationsParams.rawPayload"},
		{"raw payload not JSON", "POST", create, `{"eventType":"a.b","payload":{},"transformationsParams":{"rawPayload":"<xml/>"}}`, 422, "transformationsParams.rawPayload"},
		{"raw payload an array", "POST", create, `{"eventType":"a.b","payload":{},"transformationsParams":{"rawPayload":"[1,2]"}}`, 422, "transformationsParams.rawPayload"},
		{"application without uid", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{},"application":{"name":"N"}}`, 422, "application.uid"},
		{"application uid mismatch", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{},"application":{"name":"N","uid":"other-uid"}}`, 422, "application.uid"},
		{"application without name", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{},"application":{"uid":"nope"}}`, 422, "application.name"},
		{"application bad rate", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{},"application":{"name":"N","uid":"nope","throttleRate":0}}`, 422, "application.throttleRate"},
		{"application a string", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{},"application":"nope"}`, 422, "application"},
		{"unknown application", "POST", "/api/v1/app/nope/msg", `{"eventType":"a.b","payload":{}}`, 404, ""},
		{"duplicate eventId", "POST", create, `{"eventType":"a.b","eventId":"known","payload":{}}`, 409, ""},
		{"bad with_content", "POST", create + "?with_content=maybe", `{"eventType":"a.b","payload":{}}`, 422, "with_content"},

		{"list: unknown application", "GET", "/api/v1/app/nope/msg", "", 404, ""},
		{"list: limit 0", "GET", create + "?limit=0", "", 422, "limit"},
		{"list: limit too big", "GET", create + "?limit=251", "", 422, "limit"},
		{"list: limit a word", "GET", create + "?limit=ten", "", 422, "limit"},
		{"list: bad before", "GET", create + "?before=yesterday", "", 422, "before"},
		{"list: bad after", "GET", create + "?after=2026-13-01", "", 422, "after"},
		{"list: bad channel", "GET", create + "?channel=a%20b", "", 422, "channel"},
		{"list: bad event type", "GET", create + "?event_types=a%2Fb", "", 422, "event_types"},
		{"list: bad with_content", "GET", create + "?with_content=2", "", 422, "with_content"},
		{"get: unknown message", "GET", create + "/msg_unknown", "", 404, ""},
		{"get: another application's message", "GET", create + "/" + otherMsg.Message.ID, "", 404, ""},
		{"get: unknown application", "GET", "/api/v1/app/nope/msg/" + msg, "", 404, ""},
		{"expunge: unknown message", "DELETE", create + "/msg_unknown/content", "", 404, ""},

		{"attempts by endpoint: unknown endpoint", "GET", "/api/v1/app/bad/attempt/endpoint/ep_unknown", "", 404, ""},
		{"attempts by endpoint: unknown application", "GET", "/api/v1/app/nope/attempt/endpoint/" + f.ep.ID, "", 404, ""},
		{"attempts by endpoint: bad status", "GET", "/api/v1/app/bad/attempt/endpoint/bad-ep?status=7", "", 422, "status"},
		{"attempts by endpoint: status a word", "GET", "/api/v1/app/bad/attempt/endpoint/bad-ep?status=ok", "", 422, "status"},
		{"attempts by endpoint: bad status_code_class", "GET", "/api/v1/app/bad/attempt/endpoint/bad-ep?status_code_class=250", "", 422, "status_code_class"},
		{"attempts by endpoint: iterator not an attempt id", "GET", "/api/v1/app/bad/attempt/endpoint/bad-ep?iterator=%00%FF", "", 422, "iterator"},
		{"attempts by message: unknown message", "GET", "/api/v1/app/bad/attempt/msg/msg_unknown", "", 404, ""},
		{"attempts by message: unknown endpoint filter", "GET", "/api/v1/app/bad/attempt/msg/" + msg + "?endpoint_id=nope", "", 404, ""},
		{"attempts by message: bad before", "GET", "/api/v1/app/bad/attempt/msg/" + msg + "?before=x", "", 422, "before"},
		{"deprecated attempts: unknown message", "GET", "/api/v1/app/bad/msg/msg_unknown/attempt", "", 404, ""},
		{"deprecated attempts for endpoint: unknown endpoint", "GET", "/api/v1/app/bad/msg/" + msg + "/endpoint/nope/attempt", "", 404, ""},
		{"attempt: unknown attempt", "GET", "/api/v1/app/bad/msg/" + msg + "/attempt/atmpt_unknown", "", 404, ""},
		{"attempt: unknown message", "GET", "/api/v1/app/bad/msg/msg_unknown/attempt/atmpt_unknown", "", 404, ""},
		{"expunge attempt: unknown attempt", "DELETE", "/api/v1/app/bad/msg/" + msg + "/attempt/atmpt_unknown/content", "", 404, ""},
		{"destinations: unknown message", "GET", "/api/v1/app/bad/msg/msg_unknown/endpoint", "", 404, ""},
		{"destinations: bad limit", "GET", "/api/v1/app/bad/msg/" + msg + "/endpoint?limit=-1", "", 422, "limit"},
		{"attempted messages: unknown endpoint", "GET", "/api/v1/app/bad/endpoint/nope/msg", "", 404, ""},
		{"attempted messages: bad status", "GET", "/api/v1/app/bad/endpoint/bad-ep/msg?status=-1", "", 422, "status"},
		{"resend: unknown message", "POST", "/api/v1/app/bad/msg/msg_unknown/endpoint/bad-ep/resend", "", 404, ""},
		{"resend: unknown endpoint", "POST", "/api/v1/app/bad/msg/" + msg + "/endpoint/nope/resend", "", 404, ""},
		{"resend: disabled endpoint", "POST", "/api/v1/app/bad/msg/" + msg + "/endpoint/" + disabled.ID + "/resend", "", 409, ""},
		{"no token", "GET", create, "", 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.name == "no token" {
				hdr = []string{"Authorization", ""}
			}
			resp := b.do(t, c.method, c.path, c.body, hdr...)
			body := mtJSON(t, resp)
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, c.want, body)
			}
			if c.want == 200 {
				return
			}
			if _, ok := body["detail"]; !ok {
				t.Fatalf("error body without detail: %v", body)
			}
			if c.want == 422 && c.field != "" {
				loc := body["detail"].([]any)[0].(map[string]any)["loc"].([]any)
				if got := loc[len(loc)-1]; got != c.field {
					t.Fatalf("422 names %v, want %s: %v", loc, c.field, body)
				}
			}
		})
	}
	// Nothing of the above made a message.
	page, err := b.client.ListMessages(b.ctx, "bad", hookd.MessageFilter{})
	if err != nil || len(page.Data) != 1 {
		t.Fatalf("%d messages after the bad input, want 1 (%v)", len(page.Data), err)
	}
	if _, err := b.client.GetApplication(b.ctx, "nope"); err == nil {
		t.Fatal("an application was created by a bad request")
	}
}

// nestedPayload is a payload object nested depth levels deep: {"a":[[...[1]...]]}.
func nestedPayload(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + "}"
}

// A payload may nest 128 levels deep, the payload object being the first.
func TestMessagePayloadDepth(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "deep")
	resp := b.do(t, "POST", "/api/v1/app/deep/msg", `{"eventType":"a.b","payload":`+nestedPayload(128)+`}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a payload 128 levels deep: status %d, want 202", resp.StatusCode)
	}
	wantRefused(t, b.do(t, "POST", "/api/v1/app/deep/msg", `{"eventType":"a.b","payload":`+nestedPayload(129)+`}`), "body", "payload")
}

func TestMessagePayloadLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if _, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Big", UID: "big"}); err != nil {
		t.Fatal(err)
	}
	const maxPayload = 1 << 20 // hookd.Config.MaxPayload's default, which the test client keeps
	// payload returns a JSON object of exactly n bytes.
	payload := func(n int) string {
		const open, closing = `{"pad":"`, `"}`
		return open + strings.Repeat("x", n-len(open)-len(closing)) + closing
	}
	send := func(n int) *http.Response {
		return b.do(t, "POST", "/api/v1/app/big/msg?with_content=false", `{"eventType":"big.one","payload":`+payload(n)+`}`)
	}

	resp := send(maxPayload)
	if body := mtJSON(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("payload of exactly %d bytes: %d %v", maxPayload, resp.StatusCode, body)
	}
	page, err := b.client.ListMessages(b.ctx, "big", hookd.MessageFilter{})
	if err != nil || len(page.Data) != 1 || len(page.Data[0].Payload) != maxPayload {
		t.Fatalf("stored payload: %v", err)
	}

	// One byte over the payload limit is 413 (the contract), with Svix's error body.
	resp = send(maxPayload + 1)
	body := mtJSON(t, resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || body["code"] != "payload_too_large" {
		t.Fatalf("payload of %d bytes: %d %v", maxPayload+1, resp.StatusCode, body)
	}

	// A body over the server's MaxBody (1 MiB + 64 KiB) is 413, whatever it holds.
	maxBody := 1<<20 + 64<<10
	resp = send(maxBody + 1)
	body = mtJSON(t, resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("body over MaxBody: %d %v", resp.StatusCode, body)
	}

	// The Go SDK sees the same.
	big := map[string]any{"pad": strings.Repeat("x", maxPayload)}
	_, err = b.svix.Message.Create(b.ctx, "big", &svix.MessageIn{EventType: "big.one", Payload: big})
	if got := mtStatus(t, err); got != http.StatusRequestEntityTooLarge {
		t.Fatalf("SDK, payload over the limit: %d", got)
	}
	if page, _ := b.client.ListMessages(b.ctx, "big", hookd.MessageFilter{}); len(page.Data) != 1 {
		t.Fatalf("%d messages, want 1", len(page.Data))
	}
}
