package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// routeFuzz is a server with three applications, each with an endpoint, a message and an
// attempt, and an event type, whose ids fill the routes' parameters: the admin's requests use the
// first ("fuzz"); app-portal tokens of the second ("portal") use its ids or the third's ("other"),
// which they may never read or change.
type routeFuzz struct {
	b        *bundle
	auth     *TokenAuth
	patterns []string
	ids      map[string]string // parameter name -> a real id, of "fuzz"
	portal   map[string]string // of "portal"
	other    map[string]string // of "other"
	// readOnly and writer are app-portal tokens of "portal"; a logout request replaces them.
	readOnly, writer string
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
	if _, err := b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "fuzz.happened"}); err != nil {
		tb.Fatal(err)
	}
	// A uid no junk guesses, so that the admin's requests leave the portal's applications alone.
	nonce := fmt.Sprintf("%d", time.Now().UnixNano())
	rf := &routeFuzz{b: b, auth: auth, patterns: api.patterns,
		ids: fuzzApp(tb, b, "fuzz"), portal: fuzzApp(tb, b, "portal-"+nonce), other: fuzzApp(tb, b, "other-"+nonce)}
	rf.mintTokens(tb)
	return rf
}

// fuzzApp makes an application with uid, an endpoint, a message and its attempt, and returns
// their ids by parameter name (and "uid").
func fuzzApp(tb testing.TB, b *bundle, uid string) map[string]string {
	app, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: uid, UID: uid})
	if err != nil {
		tb.Fatal(err)
	}
	ep, err := b.client.CreateEndpoint(b.ctx, app.ID, &hookd.EndpointIn{URL: b.recv.URL("/" + uid)})
	if err != nil {
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
	return map[string]string{"app_id": app.ID, "endpoint_id": ep.ID, "msg_id": res.Message.ID, "attempt_id": attempt,
		"event_type_name": "fuzz.happened", "uid": uid}
}

// mintTokens gives rf a read-only and a writing app-portal token of "portal".
func (rf *routeFuzz) mintTokens(tb testing.TB) {
	// Not b.ctx, which ends a minute after setup: a fuzzing run lasts longer.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	for _, t := range []struct {
		dst *string
		p   Principal
	}{{&rf.readOnly, Principal{AppID: rf.portal["app_id"], ReadOnly: true}}, {&rf.writer, Principal{AppID: rf.portal["app_id"]}}} {
		if *t.dst, err = rf.auth.IssueToken(ctx, t.p, time.Hour); err != nil {
			tb.Fatal(err)
		}
		rf.b.log.Secret(*t.dst)
	}
}

// request builds the request of route number route: its parameters filled with the real ids of
// ids, or, where the bit of params says so, with junk.
func (f *routeFuzz) request(route, params uint8, junk string, ids map[string]string) (method, path string) {
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
		v := ids[name]
		if params&(1<<i) != 0 {
			v = url.PathEscape(junk)
		}
		path = path[:open] + v + path[end+1:]
		i++
	}
	return method, path
}

// check sends one request with token and fails the test unless the answer is 2xx, or 4xx with a
// JSON body. It returns the status (0 for a path no client could send) and the body.
func (f *routeFuzz) check(t *testing.T, token, method, path string, body []byte, header http.Header) (int, []byte) {
	req, err := http.NewRequest(method, f.b.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil // a path no client could send
	}
	req.Header = header.Clone()
	req.Header.Set("Authorization", "Bearer "+token)
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
	return resp.StatusCode, out
}

// FuzzRoutes sends any body to any route, with its parameters real or junk, as JSON and as
// anything else, with the admin token and with a read-only and a writing app-portal token of the
// application "portal" (the high bit of params: its parameters are the ids of "other" instead).
// The answer is 2xx, or 4xx with a JSON error; never a 500, never a panic (the handlers' recover
// would make one a 500). A read-only token changes nothing; no app-portal token reads "other"'s
// data (a 2xx answer that names one of its ids) or changes it. Its seeds run with the normal tests;
// fuzz it with
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
		f.Add(uint8(i), uint8(otherApp), "junk", []byte(`{"url":"https://example.com/x","eventType":"fuzz.happened","payload":{}}`), true)
		f.Add(uint8(i), uint8(otherApp|1<<1), "junk", []byte(`{}`), true)
	}
	f.Fuzz(func(t *testing.T, route, params uint8, junk string, body []byte, asJSON bool) {
		h := http.Header{}
		if asJSON {
			h.Set("Content-Type", "application/json")
		} else {
			h.Set("Content-Type", "text/plain")
		}
		ids := rf.portal
		if params&otherApp != 0 {
			ids = rf.other
		}
		method, path := rf.request(route, params, junk, ids)
		before := rf.states(t)
		status, out := rf.check(t, rf.readOnly, method, path, body, h)
		if after := rf.states(t); after != before {
			t.Fatalf("%s %s with body %q and a read-only token: %d %s; it changed\n%s\ninto\n%s", method, path, short(body), status, out, before, after)
		}
		rf.checkOtherUnseen(t, "read-only", method, path, body, status, out)
		other := rf.otherState(t)
		status, out = rf.check(t, rf.writer, method, path, body, h)
		if after := rf.otherState(t); after != other {
			t.Fatalf("%s %s with body %q and an app-portal token of another application: %d %s; it changed\n%s\ninto\n%s", method, path, short(body), status, out, other, after)
		}
		rf.checkOtherUnseen(t, "app-portal", method, path, body, status, out)
		if path == "/api/v1/auth/logout" {
			rf.mintTokens(t)
		}

		method, path = rf.request(route, params&^otherApp, junk, rf.ids)
		rf.check(t, testToken, method, path, body, h)
	})
}

// otherApp is the bit of params that fills an app-portal token's request with the ids of the
// application it may not use.
const otherApp = 1 << 7

// states is what a write could change of "portal" and "other".
func (rf *routeFuzz) states(t *testing.T) string {
	p := rf.portal
	return writableState(t, rf.b, p["app_id"], p["msg_id"], p["attempt_id"]) + "\n" + rf.otherState(t)
}

// otherState is what a write could change of "other".
func (rf *routeFuzz) otherState(t *testing.T) string {
	o := rf.other
	return writableState(t, rf.b, o["app_id"], o["msg_id"], o["attempt_id"])
}

// checkOtherUnseen fails the test when a 2xx answer to "portal"'s token names an id of "other".
func (rf *routeFuzz) checkOtherUnseen(t *testing.T, who, method, path string, body []byte, status int, out []byte) {
	if status < 200 || status >= 300 {
		return
	}
	for name, id := range rf.other {
		if name != "event_type_name" && id != "" && bytes.Contains(out, []byte(id)) {
			t.Fatalf("%s %s with body %q and a %s token of another application: %d names %s %s: %s", method, path, short(body), who, status, name, id, out)
		}
	}
}

// TestEveryRouteIsFuzzed makes sure the fuzz target's routes are the server's: a route added
// later is in the seeds at once.
func TestEveryRouteIsFuzzed(t *testing.T) {
	rf := newRouteFuzz(t)
	if len(rf.patterns) < 30 {
		t.Fatalf("%d routes; want the whole API", len(rf.patterns))
	}
	for i := range rf.patterns {
		_, path := rf.request(uint8(i), 0, "", rf.ids)
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
