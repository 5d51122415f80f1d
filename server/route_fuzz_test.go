package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// routeFuzz is a server with one application, endpoint, message, attempt and event type, whose
// ids fill the routes' parameters.
type routeFuzz struct {
	b        *bundle
	patterns []string
	ids      map[string]string // parameter name -> a real id
}

func newRouteFuzz(tb testing.TB) *routeFuzz {
	b := setup(tb, nil)
	// The store's own authenticator, which also mints and revokes tokens, as hookd serve has.
	auth, _, err := NewTokenAuth(b.ctx, b.store, testToken, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	api, err := New(b.client, &Config{Auth: auth, Logger: b.log.Logger()})
	if err != nil {
		tb.Fatal(err)
	}
	b.srv = httptest.NewServer(api)
	tb.Cleanup(b.srv.Close)
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "fuzz", UID: "fuzz"})
	if err != nil {
		tb.Fatal(err)
	}
	ep, err := b.client.CreateEndpoint(b.ctx, app.ID, &hookd.EndpointIn{URL: b.recv.URL("/fuzz")})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "fuzz.happened"}); err != nil {
		tb.Fatal(err)
	}
	res, err := b.client.Send(b.ctx, app.ID, &hookd.MessageIn{EventType: "fuzz.happened", Payload: map[string]int{"n": 1}})
	if err != nil {
		tb.Fatal(err)
	}
	var attempt string
	for deadline := time.Now().Add(10 * time.Second); attempt == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p, err := b.client.ListAttempts(b.ctx, app.ID, hookd.AttemptFilter{MessageID: res.Message.ID})
		if err == nil && len(p.Data) > 0 {
			attempt = p.Data[0].ID
		}
	}
	return &routeFuzz{b: b, patterns: api.patterns, ids: map[string]string{
		"app_id": app.ID, "endpoint_id": ep.ID, "msg_id": res.Message.ID, "attempt_id": attempt, "event_type_name": "fuzz.happened",
	}}
}

// request builds the request of route number route: its parameters filled with the real ids, or,
// where the bit of params says so, with junk; body as given.
func (f *routeFuzz) request(route, params uint8, junk string, body []byte) (method, path string) {
	pattern := f.patterns[int(route)%len(f.patterns)]
	method, path, _ = strings.Cut(pattern, " ")
	i := 0
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			break
		}
		end := open + strings.IndexByte(path[open:], '}')
		name := strings.TrimSuffix(path[open+1:end], "...")
		v := f.ids[name]
		if params&(1<<i) != 0 {
			v = url.PathEscape(junk)
		}
		path = path[:open] + v + path[end+1:]
		i++
	}
	return method, path
}

// check sends one request and fails the test unless the answer is 2xx, or 4xx with a JSON body.
func (f *routeFuzz) check(t *testing.T, method, path string, body []byte, header http.Header) {
	req, err := http.NewRequest(method, f.b.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		return // a path no client could send
	}
	req.Header = header.Clone()
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode >= 500:
		t.Fatalf("%s %s with body %q: %d %s", method, path, short(body), resp.StatusCode, out)
	case resp.StatusCode >= 400:
		var e map[string]any
		if err := json.Unmarshal(out, &e); err != nil || (e["detail"] == nil && e["code"] == nil) {
			t.Fatalf("%s %s with body %q: %d with a body that is not a JSON error: %s", method, path, short(body), resp.StatusCode, out)
		}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		t.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
	}
}

// FuzzRoutes sends any body to any route, with its parameters real or junk, as JSON and as
// anything else: the answer is 2xx, or 4xx with a JSON error; never a 500, never a panic (the
// handlers' recover would make one a 500). Its seeds run with the normal tests; fuzz it with
//
//	go test -run x -fuzz FuzzRoutes -fuzztime 60s ./server/
func FuzzRoutes(f *testing.F) {
	rf := newRouteFuzz(f)
	bodies := []string{``, `{}`, `[]`, `null`, `{"name":`, `{"name":"x","uid":"y"}`, `{"url":"http://127.0.0.1:1/x"}`,
		`{"eventType":"fuzz.happened","payload":{}}`, `{"eventType":"","payload":[]}`, `{"name":"x\u0000"}`,
		`{"channels":["a","a"],"filterTypes":[1]}`, `{"expiry":-1}`, `{"key":"whsec_AAAA"}`, `{"since":"yesterday"}`,
		`{"metadata":{"k":1}}`, `{"rateLimit":-5,"version":0}`, strings.Repeat(`[`, 10000), "\xff\xfe"}
	for i := range rf.patterns {
		for j, body := range bodies {
			f.Add(uint8(i), uint8(j%4), "junk/../x", []byte(body), j%3 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, route, params uint8, junk string, body []byte, asJSON bool) {
		method, path := rf.request(route, params, junk, body)
		h := http.Header{}
		if asJSON {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/plain")
		}
		rf.check(t, method, path, body, h)
	})
}

// TestEveryRouteIsFuzzed makes sure the fuzz target's routes are the server's: a route added
// later is in the seeds at once.
func TestEveryRouteIsFuzzed(t *testing.T) {
	rf := newRouteFuzz(t)
	if len(rf.patterns) < 30 {
		t.Fatalf("%d routes; want the whole API", len(rf.patterns))
	}
	for i := range rf.patterns {
		_, path := rf.request(uint8(i), 0, "", nil)
		if strings.ContainsAny(path, "{}") {
			t.Errorf("route %q keeps a parameter without an id: %s", rf.patterns[i], path)
		}
	}
}

// short is the start of b, for messages.
func short(b []byte) []byte {
	if len(b) > 120 {
		return b[:120]
	}
	return b
}
