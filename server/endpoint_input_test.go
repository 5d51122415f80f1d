package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/signature"
)

// epEventTypes creates event types, so that endpoints may filter on them.
func epEventTypes(t *testing.T, b *bundle, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
}

// epRead422 checks that resp is a 422 and returns its first entry's field and message.
func epRead422(t *testing.T, resp *http.Response) (field, msg string) {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %s", resp.StatusCode, body)
	}
	var v struct {
		Detail []struct {
			Loc  []string `json:"loc"`
			Msg  string   `json:"msg"`
			Type string   `json:"type"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Detail) != 1 {
		t.Fatalf("422 body %s: %v", body, err)
	}
	d := v.Detail[0]
	if len(d.Loc) != 2 || d.Loc[0] != "body" || d.Type != "value_error" {
		t.Fatalf("422 entry %+v", d)
	}
	return d.Loc[1], d.Msg
}

// Endpoint input that Svix's server refuses is a 422 with its message, naming the field, on
// create, update and patch alike, and nothing is stored: event types that do not exist or are
// archived, empty filters, channels outside 1..10, the header names it forbids, secrets without
// their prefix.
func TestEndpointInputRefusedAsSvixDoes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "in")
	epEventTypes(t, b, "invoice.paid", "invoice.voided", "user.signup")
	if err := b.client.DeleteEventType(b.ctx, "invoice.voided", false); err != nil {
		t.Fatal(err)
	}
	ep, err := b.client.CreateEndpoint(b.ctx, "in", &hookd.EndpointIn{
		URL: "https://example.com/a", UID: "e1", EventTypes: []string{"invoice.paid"},
		Channels: []string{"c1"}, Headers: map[string]string{"X-Keep": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := b.client.EndpointSecret(b.ctx, "in", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(secret)
	const (
		list = "/api/v1/app/in/endpoint"
		one  = list + "/e1"
	)
	bare := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567")) // 24 bytes, no prefix
	const (
		missing   = "The following event types don't exist: "
		empty     = "eventTypes can't be empty, it must have at least one item."
		channels  = "Channels must have at least 1 and at most 10 items, or be set to null."
		forbidden = "Header uses a forbidden key."
		prefix    = "Header starts with a forbidden prefix."
	)
	eleven := `["a","b","c","d","e","f","g","h","i","j","k"]`
	type tcase struct {
		name, method, path, body string
		field, msg               string
	}
	tests := []tcase{
		{"create unknown type", "POST", list, `{"url":"https://x.example","eventTypes":["invoice.paid","nope.one","nope.two","nope.one"]}`, "eventTypes", missing + "nope.one, nope.two"},
		{"create archived type", "POST", list, `{"url":"https://x.example","filterTypes":["invoice.voided"]}`, "filterTypes", missing + "invoice.voided"},
		{"create empty types", "POST", list, `{"url":"https://x.example","eventTypes":[]}`, "eventTypes", empty},
		{"create empty channels", "POST", list, `{"url":"https://x.example","channels":[]}`, "channels", channels},
		{"create eleven channels", "POST", list, `{"url":"https://x.example","channels":` + eleven + `}`, "channels", channels},
		{"put unknown type", "PUT", one, `{"url":"https://x.example","eventTypes":["nope"]}`, "eventTypes", missing + "nope"},
		{"put unknown type creating", "PUT", list + "/e2", `{"url":"https://x.example","filterTypes":["nope"]}`, "filterTypes", missing + "nope"},
		{"put empty types", "PUT", one, `{"url":"https://x.example","filterTypes":[]}`, "filterTypes", empty},
		{"put empty channels", "PUT", one, `{"url":"https://x.example","channels":[]}`, "channels", channels},
		{"patch unknown type", "PATCH", one, `{"eventTypes":["user.signup","nope"]}`, "eventTypes", missing + "nope"},
		{"patch archived type", "PATCH", one, `{"filterTypes":["invoice.voided"]}`, "filterTypes", missing + "invoice.voided"},
		{"patch empty types", "PATCH", one, `{"eventTypes":[]}`, "eventTypes", empty},
		{"patch empty channels", "PATCH", one, `{"channels":[]}`, "channels", channels},
		{"patch eleven channels", "PATCH", one, `{"channels":` + eleven + `}`, "channels", channels},
		// headers: the routes, and headers on the endpoint itself
		{"headers put bad name", "PUT", one + "/headers", `{"headers":{"some:thing":"1"}}`, "headers", "Invalid Header Name."},
		{"headers put bad value", "PUT", one + "/headers", `{"headers":{"X-A":"a\u0000b"}}`, "headers", "Invalid Header Value."},
		{"headers put long value", "PUT", one + "/headers", `{"headers":{"X-A":"` + strings.Repeat("a", 4097) + `"}}`, "headers", "Maximum header length is 4096 bytes"},
		{"headers patch forbidden", "PATCH", one + "/headers", `{"headers":{"User-Agent":"me"}}`, "headers", forbidden},
		{"headers patch prefix", "PATCH", one + "/headers", `{"headers":{"X-Goog-Thing":"1"}}`, "headers", prefix},
		{"create forbidden header", "POST", list, `{"url":"https://x.example","headers":{"Cache-Control":"no"}}`, "headers", forbidden},
		{"create prefixed header", "POST", list, `{"url":"https://x.example","headers":{"x-amzn-trace-id":"1"}}`, "headers", prefix},
		{"put forbidden header", "PUT", one, `{"url":"https://x.example","headers":{"TE":"trailers"}}`, "headers", forbidden},
		{"patch prefixed header", "PATCH", one, `{"headers":{"X-Azure-Ref":"1"}}`, "headers", prefix},
		// deleteHeaders
		{"delete not a list", "PATCH", one + "/headers", `{"headers":{},"deleteHeaders":"X-Keep"}`, "deleteHeaders", "must be a list of strings"},
		{"delete bad name", "PATCH", one + "/headers", `{"deleteHeaders":["X-Keep","a b"]}`, "deleteHeaders", "Invalid Header Name."},
		{"delete and set", "PATCH", one + "/headers", `{"headers":{"x-keep":"2"},"deleteHeaders":["X-Keep"]}`, "deleteHeaders", `header "x-keep" is both set in headers and deleted`},
		{"neither", "PATCH", one + "/headers", `{"headers":null}`, "headers", "field required"},
		// secrets
		{"create bare secret", "POST", list, `{"url":"https://x.example","secret":"` + bare + `"}`, "secret", "invalid prefix"},
		{"patch bare secret", "PATCH", one, `{"secret":"` + bare + `"}`, "secret", "invalid prefix"},
		{"rotate bare key", "POST", one + "/secret/rotate", `{"key":"` + bare + `"}`, "key", "invalid prefix"},
		{"rotate public key", "POST", one + "/secret/rotate", `{"key":"whpk_` + bare + `"}`, "key", "invalid prefix"},
	}
	for _, name := range []string{
		"user-agent", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
		"transfer-encoding", "upgrade", "age", "cache-control", "clear-site-data", "expires", "pragma",
		"warning", "content-length", "content-type", "content-encoding", "content-language", "content-location",
	} {
		tests = append(tests, tcase{"headers put " + name, "PUT", one + "/headers", `{"headers":{"` + strings.ToUpper(name) + `":"1"}}`, "headers", forbidden})
	}
	for _, p := range []string{"x-amz-", "x-amzn-", "x-google", "x-goog-", "x-gfe", "x-azure-", "x-fd-", "x-svix-", "svix-"} {
		tests = append(tests, tcase{"headers put " + p, "PUT", one + "/headers", `{"headers":{"` + p + `foo":"1"}}`, "headers", prefix})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			field, msg := epRead422(t, b.do(t, tc.method, tc.path, tc.body))
			if field != tc.field || msg != tc.msg {
				t.Fatalf("field %q, message %q; want %q, %q", field, msg, tc.field, tc.msg)
			}
		})
	}
	// Nothing above was stored.
	got, err := b.client.GetEndpoint(b.ctx, "in", "e1")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != ep.URL || !slices.Equal(got.EventTypes, ep.EventTypes) || !slices.Equal(got.Channels, ep.Channels) ||
		len(got.Headers) != 1 || got.Headers["X-Keep"] != "1" {
		t.Fatalf("endpoint changed: %+v", got)
	}
	if s, err := b.client.EndpointSecret(b.ctx, "in", ep.ID); err != nil || s != secret {
		t.Fatalf("secret changed: %v", err)
	}
	if page, _ := b.client.ListEndpoints(b.ctx, "in", hookd.ListOptions{}); len(page.Data) != 1 {
		t.Fatalf("%d endpoints", len(page.Data))
	}
}

// The longest list of event types costs one lookup, and the 422 names a bounded number of them.
func TestEndpointManyUnknownEventTypes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "many")
	epEventTypes(t, b, "invoice.paid")
	names := make([]string, 0, maxNameList)
	for i := range maxNameList - 1 {
		names = append(names, "t."+strings.Repeat("x", i%3)+strconv.Itoa(i))
	}
	names = append(names, "invoice.paid")
	body, _ := json.Marshal(map[string]any{"url": "https://x.example", "eventTypes": names})
	field, msg := epRead422(t, b.do(t, "POST", "/api/v1/app/many/endpoint", string(body)))
	if field != "eventTypes" || !strings.HasPrefix(msg, "The following event types don't exist: t.0, t.x1, t.xx2, ") ||
		!strings.HasSuffix(msg, fmt.Sprintf(" (and %d more)", maxNameList-1-maxNamedMissing)) || strings.Contains(msg, "invoice.paid") {
		t.Fatalf("field %q, message %.200q", field, msg)
	}
}

// The headers PATCH removes the headers deleteHeaders names (today's SDKs send it, with headers
// null when they set none), matching names without regard to case; sensitive values stay hidden.
func TestEndpointHeadersDeleteAndSensitive(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "hd")
	ep, err := b.client.CreateEndpoint(b.ctx, "hd", &hookd.EndpointIn{URL: "https://example.com/a", Headers: map[string]string{
		"X-A": "1", "X-B": "2", "X-C": "3", "X-Auth-Token": "t", "WWW-Authenticate": "w", "Authorization": "a", "X-Plain": "p",
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/app/hd/endpoint/" + ep.ID + "/headers"
	for _, body := range []string{
		`{"headers":null,"deleteHeaders":["x-a"]}`,
		`{"deleteHeaders":["X-B","X-Missing"],"headers":{"X-D":"4","X-C":null}}`,
	} {
		if resp := b.do(t, "PATCH", path, body); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("PATCH %s: %d", body, resp.StatusCode)
		}
	}
	got, err := b.client.GetEndpoint(b.ctx, "hd", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range got.Headers {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"Authorization", "WWW-Authenticate", "X-Auth-Token", "X-D", "X-Plain"}; !slices.Equal(keys, want) {
		t.Fatalf("headers %v, want %v", keys, want)
	}
	out := epReadJSON(t, b.do(t, "GET", path, ""), http.StatusOK)
	if h := out["headers"].(map[string]any); len(h) != 2 || h["X-D"] != "4" || h["X-Plain"] != "p" {
		t.Fatalf("shown headers %v", h)
	}
	var sensitive []string
	for _, s := range out["sensitive"].([]any) {
		sensitive = append(sensitive, s.(string))
	}
	if want := []string{"Authorization", "WWW-Authenticate", "X-Auth-Token"}; !slices.Equal(sensitive, want) {
		t.Fatalf("sensitive %v, want %v", sensitive, want)
	}
}

// Secrets with their prefix are taken: whsec_ on create, whsk_ (ed25519) on rotate.
func TestEndpointSecretWithPrefix(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "sec")
	hmac := signature.NewSecret()
	ed, _, err := signature.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(hmac, ed)
	out := epReadJSON(t, b.do(t, "POST", "/api/v1/app/sec/endpoint", `{"url":"https://x.example","secret":"`+hmac+`"}`), http.StatusCreated)
	id := out["id"].(string)
	if s, err := b.client.EndpointSecret(b.ctx, "sec", id); err != nil || s != hmac {
		t.Fatalf("secret after create: %v", err)
	}
	if resp := b.do(t, "POST", "/api/v1/app/sec/endpoint/"+id+"/secret/rotate", `{"key":"`+ed+`"}`); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("rotate: %d", resp.StatusCode)
	}
	if s, err := b.client.EndpointSecret(b.ctx, "sec", id); err != nil || s != ed {
		t.Fatalf("secret after rotate: %v", err)
	}
}
