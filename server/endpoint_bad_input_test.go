package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// Every endpoint route answers bad input with a 4xx and a JSON body, never a 500.
func TestEndpointBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "bad")
	if _, err := b.client.CreateEndpoint(b.ctx, "bad", &hookd.EndpointIn{URL: "https://example.com/a", UID: "e1"}); err != nil {
		t.Fatal(err)
	}
	const (
		list = "/api/v1/app/bad/endpoint"
		one  = list + "/e1"
	)
	elevenChannels := `["a","b","c","d","e","f","g","h","i","j","k"]`
	tests := []struct {
		name, method, path, body string
		status                   int
		field                    string // for a 422: the field named in loc
	}{
		// create
		{"create malformed", "POST", list, `{"url":`, 400, ""},
		{"create empty body", "POST", list, ``, 422, "body"},
		{"create not an object", "POST", list, `["https://example.com"]`, 422, "body"},
		{"create null body", "POST", list, `null`, 422, "body"},
		{"create missing url", "POST", list, `{}`, 422, "url"},
		{"create url not a string", "POST", list, `{"url":5}`, 422, "url"},
		{"create invalid url", "POST", list, `{"url":"not a url"}`, 422, "url"},
		{"create ftp url", "POST", list, `{"url":"ftp://x"}`, 422, "url"},
		{"create url with password", "POST", list, `{"url":"https://u:p@example.com"}`, 422, "url"},
		{"create uid with colon", "POST", list, `{"url":"https://x.example","uid":"a:b"}`, 422, "uid"},
		{"create uid like an id", "POST", list, `{"url":"https://x.example","uid":"ep_123"}`, 422, "uid"},
		{"create uid empty", "POST", list, `{"url":"https://x.example","uid":""}`, 422, "uid"},
		{"create uid too long", "POST", list, `{"url":"https://x.example","uid":"` + strings.Repeat("a", 257) + `"}`, 422, "uid"},
		{"create uid taken", "POST", list, `{"url":"https://x.example","uid":"e1"}`, 409, ""},
		{"create filterTypes not a list", "POST", list, `{"url":"https://x.example","filterTypes":"a"}`, 422, "filterTypes"},
		{"create eventTypes bad name", "POST", list, `{"url":"https://x.example","eventTypes":["a b"]}`, 422, "eventTypes"},
		{"create both names", "POST", list, `{"url":"https://x.example","eventTypes":["a"],"filterTypes":["a"]}`, 422, "filterTypes"},
		{"create channel not a string", "POST", list, `{"url":"https://x.example","channels":[1]}`, 422, "channels"},
		{"create eleven channels", "POST", list, `{"url":"https://x.example","channels":` + elevenChannels + `}`, 422, "channels"},
		{"create rateLimit zero", "POST", list, `{"url":"https://x.example","rateLimit":0}`, 422, "rateLimit"},
		{"create throttleRate negative", "POST", list, `{"url":"https://x.example","throttleRate":-1}`, 422, "throttleRate"},
		{"create rateLimit too big", "POST", list, `{"url":"https://x.example","rateLimit":70000}`, 422, "rateLimit"},
		{"create rateLimit fraction", "POST", list, `{"url":"https://x.example","rateLimit":1.5}`, 422, "rateLimit"},
		{"create rateLimit string", "POST", list, `{"url":"https://x.example","rateLimit":"5"}`, 422, "rateLimit"},
		{"create rateLimit huge", "POST", list, `{"url":"https://x.example","rateLimit":1e400}`, 422, "rateLimit"},
		{"create version zero", "POST", list, `{"url":"https://x.example","version":0}`, 422, "version"},
		{"create metadata not strings", "POST", list, `{"url":"https://x.example","metadata":{"a":1}}`, 422, "metadata"},
		{"create metadata a list", "POST", list, `{"url":"https://x.example","metadata":[]}`, 422, "metadata"},
		{"create disabled a string", "POST", list, `{"url":"https://x.example","disabled":"yes"}`, 422, "disabled"},
		{"create secret short", "POST", list, `{"url":"https://x.example","secret":"whsec_abc"}`, 422, "secret"},
		{"create secret a number", "POST", list, `{"url":"https://x.example","secret":5}`, 422, "secret"},
		{"create header bad name", "POST", list, `{"url":"https://x.example","headers":{"a b":"x"}}`, 422, "headers"},
		{"create unknown app", "POST", "/api/v1/app/nope/endpoint", `{"url":"https://x.example"}`, 404, ""},
		// list
		{"list limit zero", "GET", list + "?limit=0", "", 422, "limit"},
		{"list limit text", "GET", list + "?limit=abc", "", 422, "limit"},
		{"list order", "GET", list + "?order=sideways", "", 422, "order"},
		{"list unknown app", "GET", "/api/v1/app/nope/endpoint", "", 404, ""},
		// get, delete
		{"get unknown endpoint", "GET", list + "/nope", "", 404, ""},
		{"get unknown app", "GET", "/api/v1/app/nope/endpoint/e1", "", 404, ""},
		{"delete unknown endpoint", "DELETE", list + "/nope", "", 404, ""},
		{"delete unknown app", "DELETE", "/api/v1/app/nope/endpoint/e1", "", 404, ""},
		// update
		{"put malformed", "PUT", one, `{"url"`, 400, ""},
		{"put missing url", "PUT", one, `{}`, 422, "url"},
		{"put ftp url", "PUT", one, `{"url":"ftp://x"}`, 422, "url"},
		{"put uid with colon", "PUT", one, `{"url":"https://x.example","uid":"a:b"}`, 422, "uid"},
		{"put wrong type", "PUT", one, `{"url":"https://x.example","channels":"c"}`, 422, "channels"},
		{"put unknown app", "PUT", "/api/v1/app/nope/endpoint/e1", `{"url":"https://x.example"}`, 404, ""},
		{"put unknown id", "PUT", list + "/ep_nope", `{"url":"https://x.example"}`, 404, ""},
		{"put unknown bad uid", "PUT", list + "/a:b", `{"url":"https://x.example"}`, 404, ""},
		// patch
		{"patch malformed", "PATCH", one, `{`, 400, ""},
		{"patch url null", "PATCH", one, `{"url":null}`, 422, "url"},
		{"patch ftp url", "PATCH", one, `{"url":"ftp://x"}`, 422, "url"},
		{"patch uid with colon", "PATCH", one, `{"uid":"a:b"}`, 422, "uid"},
		{"patch rateLimit negative", "PATCH", one, `{"rateLimit":-1}`, 422, "rateLimit"},
		{"patch disabled number", "PATCH", one, `{"disabled":1}`, 422, "disabled"},
		{"patch secret bad", "PATCH", one, `{"secret":"nope"}`, 422, "secret"},
		{"patch unknown endpoint", "PATCH", list + "/nope", `{}`, 404, ""},
		// headers
		{"headers get unknown", "GET", list + "/nope/headers", "", 404, ""},
		{"headers put malformed", "PUT", one + "/headers", `{`, 400, ""},
		{"headers put missing", "PUT", one + "/headers", `{}`, 422, "headers"},
		{"headers put null", "PUT", one + "/headers", `{"headers":null}`, 422, "headers"},
		{"headers put not strings", "PUT", one + "/headers", `{"headers":{"X-A":1}}`, 422, "headers"},
		{"headers put bad name", "PUT", one + "/headers", `{"headers":{"bad name":"x"}}`, 422, "headers"},
		{"headers put reserved", "PUT", one + "/headers", `{"headers":{"Content-Type":"text/plain"}}`, 422, "headers"},
		{"headers put newline", "PUT", one + "/headers", `{"headers":{"X-A":"a\nb"}}`, 422, "headers"},
		{"headers put twice", "PUT", one + "/headers", `{"headers":{"X-A":"1","x-a":"2"}}`, 422, "headers"},
		{"headers put unknown", "PUT", list + "/nope/headers", `{"headers":{}}`, 404, ""},
		{"headers patch malformed", "PATCH", one + "/headers", `{"headers":{`, 400, ""},
		{"headers patch a list", "PATCH", one + "/headers", `{"headers":[]}`, 422, "headers"},
		{"headers patch signature", "PATCH", one + "/headers", `{"headers":{"svix-id":"x"}}`, 422, "headers"},
		{"headers patch webhook", "PATCH", one + "/headers", `{"headers":{"Webhook-Signature":"x"}}`, 422, "headers"},
		{"headers patch unknown", "PATCH", list + "/nope/headers", `{"headers":{}}`, 404, ""},
		// secret
		{"secret unknown", "GET", list + "/nope/secret", "", 404, ""},
		{"rotate malformed", "POST", one + "/secret/rotate", `{`, 400, ""},
		{"rotate short key", "POST", one + "/secret/rotate", `{"key":"whsec_abc"}`, 422, "key"},
		{"rotate key a number", "POST", one + "/secret/rotate", `{"key":5}`, 422, "key"},
		{"rotate grace negative", "POST", one + "/secret/rotate", `{"gracePeriodSeconds":-1}`, 422, "gracePeriodSeconds"},
		{"rotate grace too long", "POST", one + "/secret/rotate", `{"gracePeriodSeconds":700000}`, 422, "gracePeriodSeconds"},
		{"rotate unknown", "POST", list + "/nope/secret/rotate", `{}`, 404, ""},
		// recover
		{"recover malformed", "POST", one + "/recover", `{`, 400, ""},
		{"recover missing since", "POST", one + "/recover", `{}`, 422, "since"},
		{"recover since text", "POST", one + "/recover", `{"since":"yesterday"}`, 422, "since"},
		{"recover since number", "POST", one + "/recover", `{"since":5}`, 422, "since"},
		{"recover until before since", "POST", one + "/recover", `{"since":"2026-01-02T00:00:00Z","until":"2026-01-01T00:00:00Z"}`, 422, "until"},
		{"recover unknown", "POST", list + "/nope/recover", `{"since":"2026-01-02T00:00:00Z"}`, 404, ""},
		// send-example
		{"example malformed", "POST", one + "/send-example", `{`, 400, ""},
		{"example empty body", "POST", one + "/send-example", ``, 422, "body"},
		{"example missing event type", "POST", one + "/send-example", `{}`, 422, "eventType"},
		{"example bad event type", "POST", one + "/send-example", `{"eventType":"a b"}`, 422, "eventType"},
		{"example event type a number", "POST", one + "/send-example", `{"eventType":5}`, 422, "eventType"},
		{"example unknown", "POST", list + "/nope/send-example", `{"eventType":"svix.ping"}`, 404, ""},
		// stats
		{"stats since text", "GET", one + "/stats?since=yesterday", "", 422, "since"},
		{"stats since 29 days before until", "GET", one + "/stats?since=2026-01-01T00:00:00Z&until=2026-01-30T00:00:00Z", "", 400, ""},
		{"stats until in the future", "GET", one + "/stats?until=2999-01-01T00:00:00Z", "", 400, ""},
		{"stats unknown", "GET", list + "/nope/stats", "", 404, ""},
		// too big
		{"create too big", "POST", list, `{"url":"https://x.example","description":"` + strings.Repeat("a", 2<<20) + `"}`, 413, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := b.do(t, tc.method, tc.path, tc.body)
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			if tc.status == http.StatusUnprocessableEntity {
				var v struct {
					Detail []struct {
						Loc []string `json:"loc"`
						Msg string   `json:"msg"`
					} `json:"detail"`
				}
				if err := json.Unmarshal(body, &v); err != nil || len(v.Detail) == 0 {
					t.Fatalf("422 body %s: %v", body, err)
				}
				if loc := v.Detail[0].Loc; len(loc) != 2 || loc[1] != tc.field || v.Detail[0].Msg == "" {
					t.Fatalf("loc %v (%s), want the field %q", loc, v.Detail[0].Msg, tc.field)
				}
				return
			}
			var v struct {
				Code   string `json:"code"`
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &v); err != nil || v.Code == "" {
				t.Fatalf("error body %s: %v", body, err)
			}
		})
	}
	// Nothing above changed the endpoint.
	ep, err := b.client.GetEndpoint(b.ctx, "bad", "e1")
	if err != nil {
		t.Fatal(err)
	}
	if ep.URL != "https://example.com/a" || len(ep.Headers) != 0 || ep.Disabled {
		t.Fatalf("endpoint changed: %+v", ep)
	}
	if page, _ := b.client.ListEndpoints(b.ctx, "bad", hookd.ListOptions{}); len(page.Data) != 1 {
		t.Fatalf("%d endpoints", len(page.Data))
	}
}
