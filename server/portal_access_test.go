package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// routeAccess is what one route answers to the app-portal tokens of its application.
type routeAccess struct {
	portal   int    // the status with a token that may write
	readOnly bool   // a read-only token gets portal too; false: 403, and nothing changes
	body     string // the request's body
	// own names what the route uses up, which the case gets a fresh one of: "endpoint" (deleted),
	// "message" (its content expunged), "token" (logged out).
	own string
}

// routeAccessCases holds every route of the API: TestPortalTokensOnEveryRoute fails on a route
// missing here, so a route added later states what a read-only token may do with it.
var routeAccessCases = map[string]routeAccess{
	"GET /api/v1/health":      {portal: 200, readOnly: true},
	"GET /api/v1/health/ping": {portal: 204, readOnly: true},

	"POST /api/v1/auth/app-portal-access/{app_id}": {portal: 403, body: `{}`},
	"POST /api/v1/auth/dashboard-access/{app_id}":  {portal: 403},
	"POST /api/v1/auth/logout":                     {portal: 204, readOnly: true, own: "token"},

	"GET /api/v1/app":             {portal: 403, readOnly: true},
	"POST /api/v1/app":            {portal: 403, body: `{"name":"new"}`},
	"GET /api/v1/app/{app_id}":    {portal: 200, readOnly: true},
	"PUT /api/v1/app/{app_id}":    {portal: 403, body: `{"name":"renamed"}`},
	"PATCH /api/v1/app/{app_id}":  {portal: 403, body: `{"name":"renamed"}`},
	"DELETE /api/v1/app/{app_id}": {portal: 403},

	"GET /api/v1/event-type":                          {portal: 200, readOnly: true},
	"POST /api/v1/event-type":                         {portal: 403, body: `{"name":"new.type","description":"d"}`},
	"POST /api/v1/event-type/schema/generate-example": {portal: 200, readOnly: true, body: `{"schema":{"type":"object"}}`},
	"GET /api/v1/event-type/{event_type_name}":        {portal: 200, readOnly: true},
	"PUT /api/v1/event-type/{event_type_name}":        {portal: 403, body: `{"description":"d"}`},
	"PATCH /api/v1/event-type/{event_type_name}":      {portal: 403, body: `{"description":"d"}`},
	"DELETE /api/v1/event-type/{event_type_name}":     {portal: 403},

	"GET /api/v1/app/{app_id}/endpoint":                              {portal: 200, readOnly: true},
	"POST /api/v1/app/{app_id}/endpoint":                             {portal: 201, body: `{"url":"https://example.com/new"}`},
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}":                {portal: 200, readOnly: true},
	"PUT /api/v1/app/{app_id}/endpoint/{endpoint_id}":                {portal: 200, body: `{"url":"https://example.com/put"}`},
	"PATCH /api/v1/app/{app_id}/endpoint/{endpoint_id}":              {portal: 200, body: `{"description":"patched"}`},
	"DELETE /api/v1/app/{app_id}/endpoint/{endpoint_id}":             {portal: 204, own: "endpoint"},
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/headers":        {portal: 200, readOnly: true},
	"PUT /api/v1/app/{app_id}/endpoint/{endpoint_id}/headers":        {portal: 204, body: `{"headers":{"X-Put":"1"}}`},
	"PATCH /api/v1/app/{app_id}/endpoint/{endpoint_id}/headers":      {portal: 204, body: `{"headers":{"X-Patch":"1"}}`},
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/secret":         {portal: 200},
	"POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/secret/rotate": {portal: 204, body: `{}`},
	"POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/recover":       {portal: 202, body: `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`},
	"POST /api/v1/app/{app_id}/endpoint/{endpoint_id}/send-example":  {portal: 200, body: `{"eventType":"acc.happened"}`},
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/stats":          {portal: 200, readOnly: true},
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/msg":            {portal: 200, readOnly: true},

	"GET /api/v1/app/{app_id}/msg":                     {portal: 200, readOnly: true},
	"POST /api/v1/app/{app_id}/msg":                    {portal: 202, body: `{"eventType":"acc.happened","payload":{"n":2}}`},
	"GET /api/v1/app/{app_id}/msg/{msg_id}":            {portal: 200, readOnly: true},
	"DELETE /api/v1/app/{app_id}/msg/{msg_id}/content": {portal: 204, own: "message"},

	"GET /api/v1/app/{app_id}/attempt/endpoint/{endpoint_id}":               {portal: 200, readOnly: true},
	"GET /api/v1/app/{app_id}/attempt/msg/{msg_id}":                         {portal: 200, readOnly: true},
	"GET /api/v1/app/{app_id}/msg/{msg_id}/attempt":                         {portal: 200, readOnly: true},
	"GET /api/v1/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}/attempt":  {portal: 200, readOnly: true},
	"GET /api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}":            {portal: 200, readOnly: true},
	"DELETE /api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content": {portal: 204},
	"GET /api/v1/app/{app_id}/msg/{msg_id}/endpoint":                        {portal: 200, readOnly: true},
	"POST /api/v1/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}/resend":  {portal: 202},
}

// accessFixture is an API over TokenAuth with one application, endpoint, message, attempt and
// event type.
type accessFixture struct {
	b    *bundle
	auth *TokenAuth
	api  *Server
	app  *hookd.Application
	ids  map[string]string // path parameter -> id
}

func newAccessFixture(t *testing.T) *accessFixture {
	t.Helper()
	b := setup(t, nil)
	auth, _, err := NewTokenAuth(b.ctx, b.store, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(b.client, &Config{Auth: auth, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	b.srv = httptest.NewServer(api)
	t.Cleanup(b.srv.Close)
	f := &accessFixture{b: b, auth: auth, api: api}
	if f.app, err = b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "acc", UID: "acc"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "acc.happened"}); err != nil {
		t.Fatal(err)
	}
	ep, msg, attempt := f.delivered(t)
	f.ids = map[string]string{"app_id": f.app.ID, "endpoint_id": ep, "msg_id": msg, "attempt_id": attempt, "event_type_name": "acc.happened"}
	return f
}

// delivered makes a new endpoint and a message delivered to it, and returns their ids and the
// attempt's.
func (f *accessFixture) delivered(t *testing.T) (ep, msg, attempt string) {
	t.Helper()
	e, err := f.b.client.CreateEndpoint(f.b.ctx, f.app.ID, &hookd.EndpointIn{URL: f.b.recv.URL("/acc")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.b.client.SendToEndpoint(f.b.ctx, f.app.ID, e.ID, &hookd.MessageIn{EventType: "acc.happened", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p, err := f.b.client.ListAttempts(f.b.ctx, f.app.ID, hookd.AttemptFilter{MessageID: res.ID})
		if err == nil && len(p.Data) > 0 {
			return e.ID, res.ID, p.Data[0].ID
		}
	}
	t.Fatal("no attempt was made")
	return "", "", ""
}

// token mints an app-portal token for the fixture's application.
func (f *accessFixture) token(t *testing.T, p Principal) string {
	t.Helper()
	p.AppID = f.app.ID
	tok, err := f.auth.IssueToken(f.b.ctx, p, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	f.b.log.Secret(tok)
	return tok
}

// fill returns pattern's method and path with the parameters set from ids.
func fill(pattern string, ids map[string]string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	for name, id := range ids {
		path = strings.ReplaceAll(path, "{"+name+"}", id)
	}
	return method, path
}

// send sends a request with token and returns the status and the body.
func (f *accessFixture) send(t *testing.T, token, method, path, body string) (int, []byte) {
	t.Helper()
	resp := f.b.do(t, method, path, body, "Authorization", "Bearer "+token)
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// TestPortalTokensOnEveryRoute sends every route of the API with a read-only app-portal token and
// with one that may write: the read-only one reads what the other reads and is refused, with 403
// in Svix's shape, every write, send and secret, and those leave the application as it was.
func TestPortalTokensOnEveryRoute(t *testing.T) {
	t.Parallel()
	f := newAccessFixture(t)
	for _, pattern := range f.api.patterns {
		if _, ok := routeAccessCases[pattern]; !ok {
			t.Errorf("route %q has no case in routeAccessCases: say what a read-only token may do with it", pattern)
		}
	}
	for pattern := range routeAccessCases {
		if !containsString(f.api.patterns, pattern) {
			t.Errorf("routeAccessCases names %q, which is not a route", pattern)
		}
	}
	for pattern := range accessExceptions {
		if !containsString(f.api.patterns, pattern) {
			t.Errorf("accessExceptions names %q, which is not a route", pattern)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	readOnly, portal := f.token(t, Principal{ReadOnly: true}), f.token(t, Principal{})
	for _, pattern := range f.api.patterns {
		c := routeAccessCases[pattern]
		ids := f.ids
		roToken, rwToken := readOnly, portal
		switch c.own {
		case "endpoint", "message":
			ep, msg, _ := f.delivered(t)
			ids = map[string]string{"app_id": f.app.ID, "endpoint_id": ep, "msg_id": msg}
		case "token":
			roToken, rwToken = f.token(t, Principal{ReadOnly: true}), f.token(t, Principal{})
		}
		method, path := fill(pattern, ids)

		before := f.state(t)
		status, body := f.send(t, roToken, method, path, c.body)
		switch {
		case c.readOnly && status != c.portal:
			t.Errorf("%s with a read-only token: %d %s; want %d", pattern, status, body, c.portal)
		case !c.readOnly:
			if status != http.StatusForbidden || !strings.Contains(string(body), `"code":"insufficient_access"`) {
				t.Errorf("%s with a read-only token: %d %s; want 403 insufficient_access", pattern, status, body)
			}
			if after := f.state(t); after != before {
				t.Errorf("%s with a read-only token changed the application:\n%s\nbecame\n%s", pattern, before, after)
			}
		}
		if status, body := f.send(t, rwToken, method, path, c.body); status != c.portal {
			t.Errorf("%s with an app-portal token: %d %s; want %d", pattern, status, body, c.portal)
		}
	}
}

// state is what a write through the API would change, as text: the application, its endpoints'
// settings, secrets and headers, its messages with their payloads, the fixture's attempt with its
// response, and the event types. What the worker changes (health, attempts) is left out.
func (f *accessFixture) state(t *testing.T) string {
	t.Helper()
	return writableState(t, f.b, f.app.ID, f.ids["msg_id"], f.ids["attempt_id"])
}

// writableState is what a write through the API could change of the application appID, as text:
// the application, its endpoints' settings, secrets and headers, its messages with their
// payloads, the response of the attempt attemptID of message msgID, and the event types. What the
// worker changes (health, attempts) is left out.
func writableState(t testing.TB, b *bundle, appID, msgID, attemptID string) string {
	t.Helper()
	// Not b.ctx, which ends a minute after setup: a fuzzing run lasts longer.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	app, err := b.client.GetApplication(ctx, appID)
	if err != nil {
		t.Fatal(err)
	}
	out := []any{app}
	eps, err := b.client.ListEndpoints(ctx, appID, hookd.ListOptions{Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps.Data {
		secret, err := b.client.EndpointSecret(ctx, appID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ep.ID, ep.UID, ep.URL, ep.Description, ep.Version, ep.EventTypes, ep.Channels, ep.Disabled,
			ep.RateLimit, ep.Headers, ep.Scheme, ep.Metadata, ep.UpdatedAt, secret)
	}
	msgs, err := b.client.ListMessages(ctx, appID, hookd.MessageFilter{ListOptions: hookd.ListOptions{Limit: 250}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.Data {
		out = append(out, m.ID, string(m.Payload))
	}
	response := "no attempt"
	switch a, err := b.client.GetAttempt(ctx, appID, msgID, attemptID); {
	case err == nil:
		response = a.Response
	case !errors.Is(err, hookd.ErrNotFound):
		t.Fatal(err)
	}
	types, err := b.client.ListEventTypes(ctx, true, hookd.ListOptions{Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, response, types.Data)
	text, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// portalToken mints an app-portal token for the fixture's application through the API, with body
// as AppPortalAccessIn.
func (f *accessFixture) portalToken(t *testing.T, body string) string {
	t.Helper()
	status, out := f.send(t, testToken, http.MethodPost, "/api/v1/auth/app-portal-access/"+f.app.ID, body)
	var access accessOut
	if status != http.StatusOK || json.Unmarshal(out, &access) != nil || access.Token == "" {
		t.Fatalf("app-portal-access %s: %d %s", body, status, out)
	}
	f.b.log.Secret(access.Token)
	return access.Token
}

// TestAppPortalAccessReadOnly mints tokens through app-portal-access: readOnly true makes a token
// that reads but may not write or read a secret; false or absent, one that may.
func TestAppPortalAccessReadOnly(t *testing.T) {
	t.Parallel()
	f := newAccessFixture(t)
	secret := "/api/v1/app/" + f.app.ID + "/endpoint/" + f.ids["endpoint_id"] + "/secret"
	endpoints := "/api/v1/app/" + f.app.ID + "/endpoint"
	for _, c := range []struct {
		body     string
		readOnly bool
	}{{`{"readOnly":true}`, true}, {`{"readOnly":false}`, false}, {`{}`, false}, {`{"readOnly":null}`, false}} {
		tok := f.portalToken(t, c.body)
		if status, out := f.send(t, tok, http.MethodGet, endpoints, ""); status != http.StatusOK {
			t.Errorf("%s: list endpoints: %d %s", c.body, status, out)
		}
		want := http.StatusOK
		if c.readOnly {
			want = http.StatusForbidden
		}
		if status, out := f.send(t, tok, http.MethodGet, secret, ""); status != want {
			t.Errorf("%s: read the secret: %d %s; want %d", c.body, status, out, want)
		}
		want = http.StatusCreated
		if c.readOnly {
			want = http.StatusForbidden
		}
		if status, out := f.send(t, tok, http.MethodPost, endpoints, `{"url":"https://example.com/x"}`); status != want {
			t.Errorf("%s: create an endpoint: %d %s; want %d", c.body, status, out, want)
		}
	}
	if status, out := f.send(t, testToken, http.MethodPost, "/api/v1/auth/app-portal-access/"+f.app.ID, `{"readOnly":"yes"}`); status != http.StatusUnprocessableEntity {
		t.Errorf("readOnly as a string: %d %s; want 422", status, out)
	}
}

// TestPortalTokenFeatureFlags: an app-portal token sees the event types without a flag and those
// with a flag it holds, in the list, the get, the endpoint filters it may set (a hidden one is the
// 422 of one that does not exist) and the example send-example takes from a schema.
func TestPortalTokenFeatureFlags(t *testing.T) {
	t.Parallel()
	f := newAccessFixture(t)
	ctx := f.b.ctx
	for _, et := range []hookd.EventType{
		{Name: "beta.only", FeatureFlags: []string{"beta"}, Schemas: json.RawMessage(`{"1":{"type":"object","examples":[{"hidden":"beta-example"}]}}`)},
		{Name: "multi.flag", FeatureFlags: []string{"gamma", "delta"}},
		{Name: "oss.flag", FeatureFlag: "beta"},
	} {
		if _, err := f.b.client.UpsertEventType(ctx, &et); err != nil {
			t.Fatal(err)
		}
	}
	tokens := map[string]string{
		"admin": testToken,
		"none":  f.portalToken(t, `{}`),
		"beta":  f.portalToken(t, `{"featureFlags":["beta"]}`),
		"delta": f.portalToken(t, `{"featureFlags":["other","delta","delta"]}`),
		"ro":    f.portalToken(t, `{"featureFlags":["gamma"],"readOnly":true}`),
	}
	sees := map[string][]string{
		"admin": {"acc.happened", "beta.only", "multi.flag", "oss.flag"},
		"none":  {"acc.happened"},
		"beta":  {"acc.happened", "beta.only", "oss.flag"},
		"delta": {"acc.happened", "multi.flag"},
		"ro":    {"acc.happened", "multi.flag"},
	}
	all := sees["admin"]
	for who, tok := range tokens {
		status, out := f.send(t, tok, http.MethodGet, "/api/v1/event-type", "")
		var list struct {
			Data []struct {
				Name string `json:"name"`
			} `json:"data"`
		}
		if status != http.StatusOK || json.Unmarshal(out, &list) != nil {
			t.Fatalf("%s: list event types: %d %s", who, status, out)
		}
		var got []string
		for _, et := range list.Data {
			got = append(got, et.Name)
		}
		if strings.Join(got, ",") != strings.Join(sees[who], ",") {
			t.Errorf("%s lists %v; want %v", who, got, sees[who])
		}
		for _, name := range all {
			want := http.StatusNotFound
			if containsString(sees[who], name) {
				want = http.StatusOK
			}
			if status, out := f.send(t, tok, http.MethodGet, "/api/v1/event-type/"+name, ""); status != want {
				t.Errorf("%s gets %s: %d %s; want %d", who, name, status, out, want)
			}
		}
	}

	// A filter on a hidden event type is the 422 of a filter on one that does not exist.
	endpoints := "/api/v1/app/" + f.app.ID + "/endpoint"
	one := endpoints + "/" + f.ids["endpoint_id"]
	for _, c := range []struct {
		who, method, path, body string
		status                  int
		missing                 string
	}{
		{"none", http.MethodPost, endpoints, `{"url":"https://example.com/a","filterTypes":["acc.happened","beta.only","nope.type"]}`, 422, "beta.only, nope.type"},
		{"none", http.MethodPost, endpoints, `{"url":"https://example.com/a","filterTypes":["nope.type"]}`, 422, "nope.type"},
		{"none", http.MethodPost, endpoints, `{"url":"https://example.com/a","filterTypes":["multi.flag"]}`, 422, "multi.flag"},
		{"none", http.MethodPut, one, `{"url":"https://example.com/a","filterTypes":["oss.flag"]}`, 422, "oss.flag"},
		{"none", http.MethodPatch, one, `{"filterTypes":["beta.only"]}`, 422, "beta.only"},
		{"delta", http.MethodPatch, one, `{"filterTypes":["acc.happened","beta.only","multi.flag"]}`, 422, "beta.only"},
		{"beta", http.MethodPost, endpoints, `{"url":"https://example.com/b","filterTypes":["beta.only","oss.flag"]}`, 201, ""},
		{"delta", http.MethodPatch, one, `{"filterTypes":["multi.flag"]}`, 200, ""},
		{"admin", http.MethodPost, endpoints, `{"url":"https://example.com/c","filterTypes":["beta.only","multi.flag"]}`, 201, ""},
	} {
		status, out := f.send(t, tokens[c.who], c.method, c.path, c.body)
		if status != c.status {
			t.Errorf("%s %s %s: %d %s; want %d", c.who, c.method, c.body, status, out, c.status)
			continue
		}
		if c.missing != "" {
			want := `{"detail":[{"loc":["body","filterTypes"],"msg":"The following event types don't exist: ` + c.missing + `","type":"value_error"}]}`
			if strings.TrimSpace(string(out)) != want {
				t.Errorf("%s %s %s: %s; want %s", c.who, c.method, c.body, out, want)
			}
		}
	}

	// send-example takes the example of a schema the caller may see, and a stand-in otherwise.
	example := one + "/send-example"
	if _, out := f.send(t, tokens["none"], http.MethodPost, example, `{"eventType":"beta.only"}`); strings.Contains(string(out), "beta-example") {
		t.Errorf("send-example of a hidden event type shows its schema's example: %s", out)
	}
	if _, out := f.send(t, tokens["beta"], http.MethodPost, example, `{"eventType":"beta.only"}`); !strings.Contains(string(out), "beta-example") {
		t.Errorf("send-example of a visible event type lacks its schema's example: %s", out)
	}
}
