package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// endpointJSON is what "endpoint get/update --json" print.
type endpointJSON struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	FilterTypes []string `json:"filterTypes"`
	Channels    []string `json:"channels"`
	RateLimit   *int     `json:"rateLimit"`
	Disabled    bool     `json:"disabled"`
	Scheme      string   `json:"scheme"`
}

// TestEndpointUpdateChangesOnlyWhatIsGiven: each endpoint update changes the flags given and
// keeps the rest (filter, channels, description, rate limit, scheme), and deliveries follow a new
// URL.
func TestEndpointUpdateChangesOnlyWhatIsGiven(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "event-type", "create", "invoice.paid")
	b.ok(t, "", "event-type", "create", "user.signup")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/old"), "--uid", "ep1",
		"--event-type", "invoice.paid", "--event-type", "user.signup", "--channel", "project_1",
		"--description", "billing", "--scheme", "svix")

	var ep endpointJSON
	b.okJSON(t, &ep, "", "endpoint", "update", "acme", "ep1", "--endpoint-url", b.recv.URL("/moved"))
	if ep.URL != b.recv.URL("/moved") || !slices.Equal(ep.FilterTypes, []string{"invoice.paid", "user.signup"}) ||
		!slices.Equal(ep.Channels, []string{"project_1"}) || ep.Description != "billing" || ep.RateLimit != nil || ep.Scheme != "svix" {
		t.Fatalf("after --endpoint-url: %+v", ep)
	}
	var got endpointJSON
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "ep1")
	if got.URL != ep.URL || !slices.Equal(got.FilterTypes, ep.FilterTypes) || got.Scheme != "svix" {
		t.Fatalf("endpoint get after update: %+v", got)
	}

	b.okJSON(t, &ep, "", "endpoint", "update", "acme", "ep1", "--rate-limit", "5", "--description", "invoices")
	if ep.RateLimit == nil || *ep.RateLimit != 5 || ep.Description != "invoices" || ep.URL != b.recv.URL("/moved") || len(ep.FilterTypes) != 2 {
		t.Fatalf("after --rate-limit 5 --description: %+v", ep)
	}
	b.okJSON(t, &ep, "", "endpoint", "update", "acme", "ep1", "--event-type", "user.signup", "--scheme", "standard")
	if !slices.Equal(ep.FilterTypes, []string{"user.signup"}) || ep.Scheme != "standard" || ep.RateLimit == nil || *ep.RateLimit != 5 ||
		!slices.Equal(ep.Channels, []string{"project_1"}) {
		t.Fatalf("after --event-type user.signup --scheme standard: %+v", ep)
	}
	ep = endpointJSON{} // fields absent from the answer must not keep their old values
	b.okJSON(t, &ep, "", "endpoint", "update", "acme", "ep1", "--all-event-types", "--all-channels", "--rate-limit", "0")
	if len(ep.FilterTypes) != 0 || len(ep.Channels) != 0 || ep.RateLimit != nil || ep.Description != "invoices" {
		t.Fatalf("after --all-event-types --all-channels --rate-limit 0: %+v", ep)
	}
	// --url is refused on update: it would name the server where a user means the endpoint.
	if r := run(t, "", "endpoint", "update", "acme", "ep1", "--url", "https://customer.example/hook", "--token", testAPIToken); r.code != exitUsage ||
		!strings.Contains(r.stderr, "--url is ambiguous here, and nothing was sent") {
		t.Errorf("endpoint update --url: exit %d, stderr %q", r.code, r.stderr)
	}
	out := b.ok(t, "", "endpoint", "update", "acme", "ep1", "--description", "all of it")
	if !strings.Contains(out, "all of it") || !strings.Contains(out, b.recv.URL("/moved")) {
		t.Fatalf("endpoint update table: %q", out)
	}

	// The next message goes to the new URL.
	b.ok(t, `{"n":1}`, "send", "acme", "--event-type", "invoice.paid")
	if _, err := b.recv.Wait(b.ctx, "/moved", 1); err != nil {
		t.Fatal(err)
	}
	if n := len(b.recv.Requests("/old")); n != 0 {
		t.Fatalf("%d requests at the old URL", n)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"nothing to change", []string{"endpoint", "update", "acme", "ep1"}, exitUsage, "endpoint update: nothing to change: pass at least one flag"},
		{"no scheme", []string{"endpoint", "update", "acme", "ep1", "--endpoint-url", "example.com/hook"}, exitUsage, `endpoint update: the endpoint URL "example.com/hook" has no scheme: start it with http:// or https://`},
		{"ftp", []string{"endpoint", "update", "acme", "ep1", "--endpoint-url", "ftp://example.com/hook"}, exitUsage, `has the scheme "ftp": only http:// and https:// are accepted`},
		{"both filters", []string{"endpoint", "update", "acme", "ep1", "--event-type", "a", "--all-event-types"}, exitUsage, "contradict"},
		{"negative rate", []string{"endpoint", "update", "acme", "ep1", "--rate-limit", "-1"}, exitUsage, "--rate-limit must be 0 (no limit) or more, got -1"},
		{"unknown scheme", []string{"endpoint", "update", "acme", "ep1", "--scheme", "hmac"}, exitUsage, `unknown scheme "hmac"`},
		{"unknown endpoint", []string{"endpoint", "update", "acme", "ep_nope", "--description", "x"}, exitFailure, "update endpoint ep_nope: endpoint ep_nope not found in application acme"},
		{"unknown event type", []string{"endpoint", "update", "acme", "ep1", "--event-type", "no.such"}, exitFailure, "422"},
	} {
		r := b.cli(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q, want %q", tc.name, r.code, tc.code, r.stderr, tc.want)
		}
	}
}

// TestEndpointDeleteConfirms: endpoint delete asks on stdin and deletes only on "y"; a stdin that
// is a file but no terminal is refused without --yes.
func TestEndpointDeleteConfirms(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	var ep endpointJSON
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/a"), "--uid", "ep1")

	for _, answer := range []string{"n\n", "\n", ""} {
		r := b.cli(t, answer, "endpoint", "delete", "acme", "ep1")
		want := "delete endpoint " + ep.ID + " (" + b.recv.URL("/a") + ") of application acme? [y/N] "
		if r.code != exitFailure || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "not deleted") {
			t.Fatalf("answer %q: exit %d, stderr %q", answer, r.code, r.stderr)
		}
	}
	b.ok(t, "", "endpoint", "get", "acme", "ep1") // still there

	// A file as stdin is not a terminal: refused, nothing asked, the endpoint kept.
	file := filepath.Join(t.TempDir(), "answer")
	if err := os.WriteFile(file, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var out, errb bytes.Buffer
	code := Run(context.Background(), []string{"endpoint", "delete", "acme", "ep1", "--url", b.url, "--token", testAPIToken}, stdin, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "stdin is not a terminal") || !strings.Contains(errb.String(), "hint: pass --yes") || strings.Contains(errb.String(), "[y/N]") {
		t.Fatalf("file stdin: exit %d, stderr %q", code, errb.String())
	}
	b.ok(t, "", "endpoint", "get", "acme", "ep1")

	if out := b.ok(t, "y\n", "endpoint", "delete", "acme", "ep1"); out != "deleted endpoint "+ep.ID+" ("+b.recv.URL("/a")+")\n" {
		t.Fatalf("delete: %q", out)
	}
	if r := b.cli(t, "", "endpoint", "get", "acme", "ep1"); r.code != exitFailure || !strings.Contains(r.stderr, "endpoint ep1 not found in application acme") {
		t.Fatalf("get after delete: exit %d, stderr %q", r.code, r.stderr)
	}

	// --yes with the file as stdin: deleted without asking.
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/b"), "--uid", "ep2")
	out.Reset()
	errb.Reset()
	code = Run(context.Background(), []string{"endpoint", "delete", "acme", "ep2", "--yes", "--url", b.url, "--token", testAPIToken}, stdin, &out, &errb)
	if code != exitOK || errb.String() != "" || !strings.Contains(out.String(), "deleted endpoint "+ep.ID) {
		t.Fatalf("--yes: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if r := b.cli(t, "", "endpoint", "delete", "acme", "ep2", "--yes"); r.code != exitFailure || !strings.Contains(r.stderr, "endpoint ep2 not found in application acme") {
		t.Fatalf("delete twice: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestEndpointStats(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/a"), "--uid", "ep1")
	var msg struct{ ID string }
	b.okJSON(t, &msg, `{"n":1}`, "send", "acme", "--event-type", "invoice.paid")
	b.okJSON(t, &msg, `{"n":2}`, "send", "acme", "--event-type", "invoice.paid")
	b.waitAttempts(t, func(as []attemptJSON) bool { return countAttempts(as, 0, 200) == 2 }, "acme", "--endpoint", "ep1")
	var s struct{ Success, Fail, Pending, Sending int }
	b.okJSON(t, &s, "", "endpoint", "stats", "acme", "ep1")
	if s.Success != 2 || s.Fail != 0 || s.Pending != 0 || s.Sending != 0 {
		t.Fatalf("stats --json: %+v", s)
	}
	out := b.ok(t, "", "endpoint", "stats", "acme", "ep1")
	if !strings.Contains(out, "success:  2") || !strings.Contains(out, "fail:     0") {
		t.Fatalf("stats table: %q", out)
	}
	if r := b.cli(t, "", "endpoint", "stats", "acme", "ep_nope"); r.code != exitFailure || !strings.Contains(r.stderr, "endpoint ep_nope not found in application acme") {
		t.Fatalf("stats of an unknown endpoint: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestAppUpdate(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	type appJSON struct {
		ID, Name  string
		UID       *string
		RateLimit *int
	}
	var a appJSON
	b.okJSON(t, &a, "", "app", "update", "acme", "--name", "Acme Inc")
	if a.Name != "Acme Inc" || a.UID == nil || *a.UID != "acme" || a.RateLimit != nil {
		t.Fatalf("after --name: %+v", a)
	}
	b.okJSON(t, &a, "", "app", "update", "acme", "--rate-limit", "7")
	if a.Name != "Acme Inc" || a.RateLimit == nil || *a.RateLimit != 7 {
		t.Fatalf("after --rate-limit 7: %+v", a)
	}
	b.okJSON(t, &a, "", "app", "update", "acme", "--uid", "acme-inc")
	if a.UID == nil || *a.UID != "acme-inc" || a.RateLimit == nil || *a.RateLimit != 7 {
		t.Fatalf("after --uid: %+v", a)
	}
	if out := b.ok(t, "", "app", "get", "acme-inc"); !strings.Contains(out, "Acme Inc") || !strings.Contains(out, "7/s") {
		t.Fatalf("app get by the new uid: %q", out)
	}
	id := a.ID
	a = appJSON{} // fields absent from the answer must not keep their old values
	b.okJSON(t, &a, "", "app", "update", id, "--uid", "", "--rate-limit", "0")
	if a.UID != nil || a.RateLimit != nil || a.Name != "Acme Inc" {
		t.Fatalf("after --uid '' --rate-limit 0: %+v", a)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"app", "update", a.ID}, exitUsage, "app update: nothing to change"},
		{[]string{"app", "update", a.ID, "--name", ""}, exitUsage, "app update: --name is empty"},
		{[]string{"app", "update", a.ID, "--rate-limit", "-2"}, exitUsage, "--rate-limit must be 0"},
		{[]string{"app", "update", "acme", "--name", "X"}, exitFailure, "update application acme: application acme not found"},
		{[]string{"app", "update", a.ID, "--uid", "no spaces"}, exitFailure, "422"},
	} {
		if r := b.cli(t, "", tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d (want %d), stderr %q, want %q", tc.args, r.code, tc.code, r.stderr, tc.want)
		}
	}
}

func TestMessageGet(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	var msg struct{ ID string }
	b.okJSON(t, &msg, "", "send", "acme", "--event-type", "invoice.paid", "--event-id", "in_1001.paid", "--channel", "project_1",
		"--data", `{"invoice":"in_1001","amount":12345678901234567890}`)
	for _, ref := range []string{msg.ID, "in_1001.paid"} {
		out := b.ok(t, "", "message", "get", "acme", ref)
		for _, want := range []string{"id:", msg.ID, "invoice.paid", "in_1001.paid", "project_1", "payload:\n{\n", `  "amount": 12345678901234567890`, `  "invoice": "in_1001"`} {
			if !strings.Contains(out, want) {
				t.Fatalf("message get %s: %q lacks %q", ref, out, want)
			}
		}
	}
	var got struct {
		ID      string
		Payload map[string]any
	}
	b.okJSON(t, &got, "", "message", "get", "acme", msg.ID)
	if got.ID != msg.ID || got.Payload["invoice"] != "in_1001" {
		t.Fatalf("message get --json: %+v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"message", "get", "acme", "msg_nope"}, "get message msg_nope: message msg_nope not found in application acme"},
		{[]string{"message", "get", "nope", msg.ID}, "get message " + msg.ID + ": application nope not found"},
	} {
		if r := b.cli(t, "", tc.args...); r.code != exitFailure || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestPortalLink: portal-link prints a URL to the portal whose token authenticates as the
// application, read-only with --read-only.
func TestPortalLink(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "app", "create", "--name", "Beta", "--uid", "beta")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/a"), "--uid", "ep1")
	link := func(args ...string) string {
		t.Helper()
		out := b.ok(t, "", append([]string{"portal-link", "acme"}, args...)...)
		u, err := url.Parse(strings.TrimSpace(out))
		server, _ := url.Parse(b.url)
		if err != nil || u.Host != server.Host || u.Path != "/portal" || u.Query().Get("token") == "" || strings.Count(out, "\n") != 1 {
			t.Fatalf("portal-link %v: %q", args, out)
		}
		return u.Query().Get("token")
	}
	token := link()
	list := run(t, "", "endpoint", "list", "acme", "--url", b.url, "--token", token)
	if list.code != exitOK || !strings.Contains(list.stdout, b.recv.URL("/a")) {
		t.Fatalf("endpoint list with the portal token: exit %d, %q %q", list.code, list.stdout, list.stderr)
	}
	if r := run(t, "", "endpoint", "list", "beta", "--url", b.url, "--token", token); r.code != exitFailure {
		t.Fatalf("the portal token reads another application: exit %d, %q", r.code, r.stdout)
	}
	ro := link("--read-only", "--expiry", "2h")
	if r := run(t, "", "endpoint", "disable", "acme", "ep1", "--url", b.url, "--token", ro); r.code != exitFailure || !strings.Contains(r.stderr, "403") {
		t.Fatalf("a read-only portal token disabled an endpoint: exit %d, %q", r.code, r.stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"portal-link", "acme", "--expiry", "30m"}, exitUsage, "portal-link: --expiry 30m0s is out of range"},
		{[]string{"portal-link", "nope"}, exitFailure, "application nope not found"},
	} {
		if r := b.cli(t, "", tc.args...); r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d (want %d), stderr %q, want %q", tc.args, r.code, tc.code, r.stderr, tc.want)
		}
	}
}

func TestEventTypeAddIsCreate(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "event-type", "add", "invoice.paid", "--description", "An invoice was paid")
	b.ok(t, "", "event-type", "create", "user.signup")
	var types []struct{ Name, Description string }
	b.okJSON(t, &types, "", "event-type", "list")
	if len(types) != 2 || types[0].Name != "invoice.paid" || types[0].Description != "An invoice was paid" || types[1].Name != "user.signup" {
		t.Fatalf("event-type list: %+v", types)
	}
	if r := run(t, "", "event-type", "add", "--help"); r.code != exitOK || !strings.HasPrefix(r.stdout, "Usage: hookd event-type add NAME") {
		t.Fatalf("event-type add --help: exit %d, %q", r.code, r.stdout)
	}
	if r := b.cli(t, "", "event-type", "delete", "no.such"); r.code != exitFailure || !strings.Contains(r.stderr, "delete event type no.such: event type no.such not found") {
		t.Fatalf("delete an unknown event type: exit %d, %q", r.code, r.stderr)
	}
}

// TestClientNotFoundNamesTheEntity: a 404 names what was missing, told apart by looking the
// application (and the message) up.
func TestClientNotFoundNamesTheEntity(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/a"), "--uid", "ep1")
	var msg struct{ ID string }
	b.okJSON(t, &msg, `{"n":1}`, "send", "acme", "--event-type", "invoice.paid")
	for _, tc := range []struct {
		args       []string
		want, hint string
	}{
		{[]string{"endpoint", "get", "acme", "ep_x"}, "get endpoint ep_x: endpoint ep_x not found in application acme", `"hookd endpoint list acme"`},
		{[]string{"endpoint", "get", "nope", "ep1"}, "get endpoint ep1: application nope not found", `"hookd app list"`},
		{[]string{"endpoint", "list", "nope"}, "list endpoints of nope: application nope not found", `"hookd app list"`},
		{[]string{"endpoint", "secret", "acme", "ep_x"}, "endpoint ep_x not found in application acme", ""},
		{[]string{"endpoint", "scheme", "acme", "ep_x", "svix"}, "endpoint ep_x not found in application acme", ""},
		{[]string{"endpoint", "disable", "acme", "ep_x"}, "endpoint ep_x not found in application acme", ""},
		{[]string{"resend", "acme", "msg_x", "ep1"}, "resend msg_x to ep1: message msg_x not found in application acme", `"hookd messages acme"`},
		{[]string{"resend", "acme", msg.ID, "ep_x"}, "endpoint ep_x not found in application acme", ""},
		{[]string{"attempts", "acme", "--msg", "msg_x"}, "message msg_x not found in application acme", ""},
		{[]string{"messages", "nope"}, "application nope not found", ""},
		{[]string{"send", "nope", "--event-type", "x", "--data", "{}"}, "send to nope: application nope not found", ""},
		{[]string{"recover", "acme", "ep_x", "--since", "1h"}, "recover endpoint ep_x: endpoint ep_x not found in application acme", ""},
		{[]string{"endpoint", "add", "nope", "--endpoint-url", "https://example.com/h", "--scheme", "svix"}, "add endpoint to nope: application nope not found", ""},
	} {
		r := b.cli(t, "", tc.args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "hint: "+tc.hint) {
			t.Errorf("%q: exit %d, stderr %q, want %q with hint %q", tc.args, r.code, r.stderr, tc.want, tc.hint)
		}
	}
}

// TestSendCountsEndpoints: send says how many endpoints the message goes to, those whose event
// type filter and channels match.
func TestSendCountsEndpoints(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "event-type", "create", "invoice.paid")
	b.ok(t, "", "event-type", "create", "user.signup")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/all"))
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/paid"), "--event-type", "invoice.paid")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/signup"), "--event-type", "user.signup")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/p1"), "--channel", "project_1")

	out := b.ok(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", "{}")
	if !strings.Contains(out, "endpoints:   2 (counted from the deliveries the server created for it)\n") {
		t.Fatalf("send invoice.paid: %q", out)
	}
	var sent struct {
		ID, EventType string
		EndpointCount int
	}
	b.okJSON(t, &sent, "", "send", "acme", "--event-type", "user.signup", "--channel", "project_1", "--data", "{}")
	if sent.EndpointCount != 3 || sent.ID == "" || sent.EventType != "user.signup" {
		t.Fatalf("send user.signup on project_1 --json: %+v", sent)
	}
	b.ok(t, "", "app", "create", "--name", "Beta", "--uid", "beta")
	out = b.ok(t, "", "send", "beta", "--event-type", "invoice.paid", "--data", "{}")
	if !strings.Contains(out, "endpoints:   0: no endpoint subscribes to its event type and channels") {
		t.Fatalf("send to no endpoint: %q", out)
	}
}

// TestSendEventIDPattern: an event id the API's pattern refuses (the colon of in_1001:paid) is a
// usage error naming the characters it accepts, before anything is sent.
func TestSendEventIDPattern(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	r := b.cli(t, "", "send", "acme", "--event-type", "invoice.paid", "--event-id", "in_1001:paid", "--data", "{}")
	want := `hookd: send: --event-id "in_1001:paid" is refused by the API: an event id is 1 to 256 of the characters a-z A-Z 0-9 - _ . (Svix's pattern ^[a-zA-Z0-9\-_.]+$)
hint: use only those characters, e.g. --event-id in_1001.paid
`
	if r.code != exitUsage || r.stderr != want {
		t.Fatalf("exit %d, stderr %q, want %q", r.code, r.stderr, want)
	}
	var msgs []struct{ ID string }
	b.okJSON(t, &msgs, "", "messages", "acme")
	if len(msgs) != 0 {
		t.Fatalf("a message was sent: %+v", msgs)
	}
	b.ok(t, "", "send", "acme", "--event-type", "invoice.paid", "--event-id", "in_1001.paid", "--data", "{}")
}

// TestEndpointAddURLFlags: --endpoint-url is the endpoint's URL; --url still is, with a warning;
// both at once, or a URL without a scheme, are usage errors.
func TestEndpointAddURLFlags(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	r := b.cli(t, "", "endpoint", "add", "acme", "--url", "https://8.8.8.8/legacy")
	if r.code != exitOK || !strings.Contains(r.stdout, "https://8.8.8.8/legacy") ||
		r.stderr != "hookd: warning: --url is the endpoint's URL here for compatibility; use --endpoint-url, and --server for the server\n" {
		t.Fatalf("--url: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = b.cli(t, "", "endpoint", "add", "acme", "--endpoint-url", "https://8.8.8.8/new")
	if r.code != exitOK || !strings.Contains(r.stdout, "https://8.8.8.8/new") || r.stderr != "" {
		t.Fatalf("--endpoint-url: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "https://8.8.8.8/a", "--endpoint-url", "https://8.8.8.8/b"}, "both --url and --endpoint-url name the endpoint's URL"},
		{[]string{"--endpoint-url", "127.0.0.1:9000/webhooks"}, `endpoint add: the endpoint URL "127.0.0.1:9000/webhooks" has no scheme: start it with http:// or https://`},
		{[]string{"--url", "example.com/hook"}, `the endpoint URL "example.com/hook" has no scheme`},
	} {
		r := b.cli(t, "", append([]string{"endpoint", "add", "acme"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "hint: ") {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	var eps []endpointJSON
	b.okJSON(t, &eps, "", "endpoint", "list", "acme")
	if len(eps) != 2 {
		t.Fatalf("endpoints after the refused adds: %+v", eps)
	}
}

// TestHelpSaysNoSeed: no command's help, nor the command list, names a seed, and events --help
// is laid out as the other commands' help.
func TestHelpSaysNoSeed(t *testing.T) {
	t.Parallel()
	if r := run(t, "", "--help"); strings.Contains(strings.ToLower(r.stdout), "seed") {
		t.Errorf("hookd --help names a seed:\n%s", r.stdout)
	}
	for _, c := range commands() {
		r := run(t, "", c.name, "--help")
		if r.code != exitOK || strings.Contains(strings.ToLower(r.stdout+r.stderr), "seed") {
			t.Errorf("%s --help: exit %d, names a seed or fails:\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
	}
	r := run(t, "", "events", "--help")
	if !strings.HasPrefix(r.stdout, "Usage: hookd events list|redrive") || !strings.Contains(r.stdout, "\nFlags:\n  -after string") || !strings.Contains(r.stdout, "\nExit codes: ") {
		t.Errorf("events --help is not laid out as the others:\n%s", r.stdout)
	}
	r = run(t, "", "pitfall", "--help")
	if !strings.Contains(r.stdout, "Measures, on this machine, an order handler that sends its webhooks inline") {
		t.Errorf("pitfall --help does not say what it measures:\n%s", r.stdout)
	}
}
