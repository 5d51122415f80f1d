package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

// testAPIToken is the admin token of the test servers.
const testAPIToken = "testsk_x"

// apiBundle is a running hookd API on a fresh SQLite file, and a receiver for its deliveries.
type apiBundle struct {
	ctx  context.Context
	url  string
	recv *hookdtest.Receiver
}

func setupAPI(t *testing.T) *apiBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	log := logcheck.New(t) // first, so that it is checked once everything stopped
	log.Secret(testAPIToken)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	t.Cleanup(func() { recv.Close(); store.Close() })
	log.SecretsAtCleanup(t, store) // after the client's Stop, before the store closes
	client, err := hookd.NewClient(store, &hookd.Config{
		Logger: log.Logger(),
		Delivery: &delivery.Config{
			Timeout:      2 * time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		client.Stop(sctx)
	})
	auth, _, err := server.NewTokenAuth(ctx, store, testAPIToken, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(client, &server.Config{Auth: auth, Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &apiBundle{ctx: ctx, url: srv.URL, recv: recv}
}

// cli runs hookd against the bundle's server with the admin token.
func (b *apiBundle) cli(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	urlFlag := "--url"
	if len(args) > 1 && args[0] == "endpoint" && (args[1] == "add" || args[1] == "update") {
		urlFlag = "--server" // --url is the endpoint's there
	}
	return run(t, stdin, append(args, urlFlag, b.url, "--token", testAPIToken)...)
}

// ok runs cli and fails the test unless it exits 0.
func (b *apiBundle) ok(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	r := b.cli(t, stdin, args...)
	if r.code != exitOK {
		t.Fatalf("hookd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// okJSON runs cli with --json and decodes stdout into v.
func (b *apiBundle) okJSON(t *testing.T, v any, stdin string, args ...string) {
	t.Helper()
	out := b.ok(t, stdin, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("hookd %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

type attemptJSON struct {
	ID                 string `json:"id"`
	MsgID              string `json:"msgId"`
	EndpointID         string `json:"endpointId"`
	Status             int    `json:"status"`
	ResponseStatusCode int    `json:"responseStatusCode"`
	TriggerType        int    `json:"triggerType"`
}

// waitAttempts polls "hookd attempts" until cond holds.
func (b *apiBundle) waitAttempts(t *testing.T, cond func([]attemptJSON) bool, args ...string) []attemptJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got []attemptJSON
		b.okJSON(t, &got, "", append([]string{"attempts"}, args...)...)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempts %v: condition not met; last %+v", args, got)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func countAttempts(as []attemptJSON, status, code int) int {
	n := 0
	for _, a := range as {
		if a.Status == status && a.ResponseStatusCode == code {
			n++
		}
	}
	return n
}

func TestClientWalk(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)

	// Applications.
	out := b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	if !strings.Contains(out, "Acme") || !strings.Contains(out, "acme") {
		t.Fatalf("app create: %q", out)
	}
	var beta struct{ ID, Name string }
	b.okJSON(t, &beta, "", "app", "create", "--name", "Beta")
	if beta.ID == "" || beta.Name != "Beta" {
		t.Fatalf("app create --json: %+v", beta)
	}
	out = b.ok(t, "", "app", "list")
	if !strings.HasPrefix(out, "ID") || !strings.Contains(out, "Acme") || !strings.Contains(out, "Beta") {
		t.Fatalf("app list: %q", out)
	}
	var apps []struct{ ID, UID, Name string }
	b.okJSON(t, &apps, "", "app", "list")
	if len(apps) != 2 {
		t.Fatalf("app list --json: %+v", apps)
	}
	if out := b.ok(t, "", "app", "get", "acme"); !strings.Contains(out, "Acme") {
		t.Fatalf("app get: %q", out)
	}
	b.ok(t, "", "app", "delete", beta.ID)
	if r := b.cli(t, "", "app", "get", beta.ID); r.code != exitFailure || !strings.Contains(r.stderr, "application "+beta.ID+" not found") {
		t.Fatalf("app get after delete: exit %d, %q", r.code, r.stderr)
	}

	// Event types.
	b.ok(t, "", "event-type", "create", "invoice.paid", "--description", "An invoice was paid")
	b.ok(t, "", "event-type", "create", "invoice.voided")
	if out := b.ok(t, "", "event-type", "list"); !strings.Contains(out, "invoice.paid") || !strings.Contains(out, "An invoice was paid") {
		t.Fatalf("event-type list: %q", out)
	}
	b.ok(t, "", "event-type", "delete", "invoice.voided", "--expunge")
	var types []struct{ Name string }
	b.okJSON(t, &types, "", "event-type", "list", "--archived")
	if len(types) != 1 || types[0].Name != "invoice.paid" {
		t.Fatalf("event-type list after expunge: %+v", types)
	}

	// An endpoint at the receiver, verified with its secret.
	var ep struct {
		ID          string
		URL         string
		FilterTypes []string
	}
	b.okJSON(t, &ep, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/ok"), "--event-type", "invoice.paid", "--uid", "ep1", "--description", "billing")
	if ep.ID == "" || ep.URL != b.recv.URL("/ok") || len(ep.FilterTypes) != 1 {
		t.Fatalf("endpoint add --json: %+v", ep)
	}
	secret := strings.TrimSpace(b.ok(t, "", "endpoint", "secret", "acme", "ep1"))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("endpoint secret: %q", secret)
	}
	if err := b.recv.SetSecret("/ok", secret); err != nil {
		t.Fatal(err)
	}
	if out := b.ok(t, "", "endpoint", "list", "acme"); !strings.Contains(out, ep.ID) || !strings.Contains(out, "enabled") || !strings.Contains(out, "billing") {
		t.Fatalf("endpoint list: %q", out)
	}
	if out := b.ok(t, "", "endpoint", "get", "acme", "ep1"); !strings.Contains(out, b.recv.URL("/ok")) {
		t.Fatalf("endpoint get: %q", out)
	}

	// Send: --data, then stdin, then @file; each arrives signed.
	var msg struct {
		ID        string
		EventType string
		EventID   string
	}
	b.okJSON(t, &msg, "", "send", "acme", "--event-type", "invoice.paid", "--event-id", "in_1", "--data", `{"id":"in_1","amount":12345678901234567890}`)
	if msg.ID == "" || msg.EventType != "invoice.paid" || msg.EventID != "in_1" {
		t.Fatalf("send --json: %+v", msg)
	}
	reqs, err := b.recv.Wait(b.ctx, "/ok", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].Verified || !strings.Contains(string(reqs[0].Body), "12345678901234567890") {
		t.Fatalf("delivery: verified %v (%v), body %s", reqs[0].Verified, reqs[0].VerifyErr, reqs[0].Body)
	}
	out = b.ok(t, `{"id":"in_2"}`, "send", "acme", "--event-type", "invoice.paid")
	if !strings.Contains(out, "msg_") && !strings.Contains(out, "id:") {
		t.Fatalf("send (stdin): %q", out)
	}
	file := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(file, []byte(`{"id":"in_3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b.ok(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", "@"+file)
	if _, err := b.recv.Wait(b.ctx, "/ok", 3); err != nil {
		t.Fatal(err)
	}

	// Messages and attempts.
	out = b.ok(t, "", "messages", "acme")
	if !strings.Contains(out, msg.ID) || !strings.Contains(out, "invoice.paid") {
		t.Fatalf("messages: %q", out)
	}
	var msgs []struct{ ID string }
	b.okJSON(t, &msgs, "", "messages", "acme", "--event-type", "invoice.paid", "--limit", "2")
	if len(msgs) != 2 {
		t.Fatalf("messages --limit 2: %+v", msgs)
	}
	b.waitAttempts(t, func(as []attemptJSON) bool { return countAttempts(as, 0, 200) == 1 }, "acme", "--msg", msg.ID)
	if out := b.ok(t, "", "attempts", "acme", "--msg", msg.ID); !strings.Contains(out, "200") || !strings.Contains(out, "success") {
		t.Fatalf("attempts table: %q", out)
	}
	b.waitAttempts(t, func(as []attemptJSON) bool { return countAttempts(as, 0, 200) == 3 }, "acme", "--endpoint", "ep1")

	// Resend: a second request for the same message.
	if out := b.ok(t, "", "resend", "acme", msg.ID, "ep1"); !strings.Contains(out, "resending") {
		t.Fatalf("resend: %q", out)
	}
	reqs, err = b.recv.Wait(b.ctx, "/ok", 4)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[3].WebhookID != reqs[0].WebhookID || !reqs[3].Verified {
		t.Fatalf("resend delivered %q (verified %v), want %q", reqs[3].WebhookID, reqs[3].Verified, reqs[0].WebhookID)
	}
	b.waitAttempts(t, func(as []attemptJSON) bool { return countAttempts(as, 0, 200) == 2 }, "acme", "--msg", msg.ID, "--endpoint", "ep1")

	// Rotate the secret: not shown unless asked.
	out = b.ok(t, "", "endpoint", "rotate-secret", "acme", "ep1")
	if !strings.Contains(out, "rotated") || strings.Contains(out, "whsec_") {
		t.Fatalf("rotate-secret: %q", out)
	}
	rotated := strings.TrimSpace(b.ok(t, "", "endpoint", "secret", "acme", "ep1"))
	if rotated == secret || !strings.HasPrefix(rotated, "whsec_") {
		t.Fatalf("secret after rotation: %q (before %q)", rotated, secret)
	}
	shown := strings.TrimSpace(b.ok(t, "", "endpoint", "rotate-secret", "acme", "ep1", "--show-secret"))
	if shown == rotated || !strings.HasPrefix(shown, "whsec_") {
		t.Fatalf("rotate-secret --show-secret: %q (before %q)", shown, rotated)
	}
	if now := strings.TrimSpace(b.ok(t, "", "endpoint", "secret", "acme", "ep1")); now != shown {
		t.Fatalf("secret %q, rotate-secret showed %q", now, shown)
	}

	// Disable and enable.
	if out := b.ok(t, "", "endpoint", "disable", "acme", "ep1"); !strings.Contains(out, "disabled") {
		t.Fatalf("disable: %q", out)
	}
	var got struct{ Disabled bool }
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "ep1")
	if !got.Disabled {
		t.Fatal("endpoint get after disable: not disabled")
	}
	if out := b.ok(t, "", "endpoint", "enable", "acme", "ep1"); !strings.Contains(out, "enabled") {
		t.Fatalf("enable: %q", out)
	}
	b.okJSON(t, &got, "", "endpoint", "get", "acme", "ep1")
	if got.Disabled {
		t.Fatal("endpoint get after enable: disabled")
	}

	// Recover: an endpoint that fails every attempt, then heals.
	b.recv.Handle("/flaky", hookdtest.Status(http.StatusServiceUnavailable, "down"))
	var flaky struct{ ID string }
	b.okJSON(t, &flaky, "", "endpoint", "add", "acme", "--endpoint-url", b.recv.URL("/flaky"))
	var failed struct{ ID string }
	b.okJSON(t, &failed, "", "send", "acme", "--event-type", "invoice.paid", "--data", `{"id":"in_4"}`)
	// The first attempt and both retries fail; then the message is failed for that endpoint.
	b.waitAttempts(t, func(as []attemptJSON) bool {
		n := 0
		for _, a := range as {
			if a.ResponseStatusCode == http.StatusServiceUnavailable {
				n++
			}
		}
		return n == 3
	}, "acme", "--msg", failed.ID, "--endpoint", flaky.ID)
	before := len(b.recv.Requests("/flaky"))
	b.recv.Handle("/flaky", hookdtest.OK())
	out = b.ok(t, "", "recover", "acme", flaky.ID, "--since", "1h")
	if !strings.Contains(out, "recovering") {
		t.Fatalf("recover: %q", out)
	}
	if _, err := b.recv.Wait(b.ctx, "/flaky", before+1); err != nil {
		t.Fatalf("recover: no new request at the endpoint: %v", err)
	}
	b.waitAttempts(t, func(as []attemptJSON) bool { return countAttempts(as, 0, 200) == 1 }, "acme", "--msg", failed.ID, "--endpoint", flaky.ID)
	var task struct{ ID, Status, Task string }
	b.okJSON(t, &task, "", "recover", "acme", flaky.ID, "--since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))
	if task.ID == "" || task.Task != "endpoint.recover" {
		t.Fatalf("recover --json: %+v", task)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string // substrings
	}{
		{"wrong token", []string{"app", "list", "--url", b.url, "--token", "testsk_wrong"}, exitFailure, []string{"401", "check --token / HOOKD_TOKEN"}},
		{"unknown app", []string{"app", "get", "nope", "--url", b.url, "--token", testAPIToken}, exitFailure, []string{"get application nope: application nope not found", "hookd app list"}},
		{"duplicate uid", []string{"app", "create", "--name", "Again", "--uid", "acme", "--url", b.url, "--token", testAPIToken}, exitFailure, []string{"409"}},
		{"invalid uid", []string{"app", "create", "--name", "Bad", "--uid", "no spaces", "--url", b.url, "--token", testAPIToken}, exitFailure, []string{"422", "uid"}},
		{"missing APP", []string{"app", "get", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"missing APP", "hint:"}},
		{"missing EP", []string{"endpoint", "get", "acme", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"missing EP"}},
		{"extra argument", []string{"resend", "acme", "m", "e", "x", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{`unexpected argument "x"`}},
		{"missing name", []string{"app", "create", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"--name is required"}},
		{"missing endpoint url", []string{"endpoint", "add", "acme", "--server", b.url, "--token", testAPIToken}, exitUsage, []string{"--endpoint-url (the endpoint's URL) is required"}},
		{"no token", []string{"app", "list", "--url", b.url}, exitUsage, []string{"--token"}},
		{"bad server url", []string{"app", "list", "--url", "127.0.0.1:8071", "--token", testAPIToken}, exitUsage, []string{`the server URL "127.0.0.1:8071" has no scheme: start it with http:// or https://`, "hint: pass the server's base URL with its scheme"}},
		{"unknown subcommand", []string{"endpoint", "remove", "acme"}, exitUsage, []string{`unknown subcommand "remove"`}},
		{"no subcommand", []string{"event-type"}, exitUsage, []string{"missing subcommand"}},
		{"attempts without filter", []string{"attempts", "acme", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"--msg, --endpoint"}},
		{"bad limit", []string{"messages", "acme", "--limit", "0", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"--limit"}},
		{"payload not an object", []string{"send", "acme", "--event-type", "x", "--data", "[1,2]", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"must be a JSON object"}},
		{"payload not JSON", []string{"send", "acme", "--event-type", "x", "--data", "{oops", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"not valid JSON"}},
		{"payload file missing", []string{"send", "acme", "--event-type", "x", "--data", "@/nonexistent/p.json", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"read the payload"}},
		{"no payload", []string{"send", "acme", "--event-type", "x", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"is empty"}},
		{"no event type", []string{"send", "acme", "--data", "{}", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"--event-type is required"}},
		{"recover without since", []string{"recover", "acme", "ep", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"--since is required"}},
		{"recover bad since", []string{"recover", "acme", "ep", "--since", "yesterday", "--url", b.url, "--token", testAPIToken}, exitUsage, []string{"neither an RFC 3339 time nor a duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "", tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Fatalf("stderr %q lacks %q", r.stderr, s)
				}
			}
			if strings.Contains(r.stderr+r.stdout, testAPIToken) || strings.Contains(r.stderr+r.stdout, "testsk_wrong") {
				t.Fatalf("output shows a token: %q %q", r.stdout, r.stderr)
			}
		})
	}
}

// A client command waits for a server that refuses connections, at most its wait, then says
// what it tried and how long it waited.
func TestClientConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, serverWait: 200 * time.Millisecond}
	r := result{code: e.run(context.Background(), []string{"app", "list", "--url", url, "--token", "secret-token-value"}), stdout: out.String(), stderr: errb.String()}
	if r.code != exitFailure || !strings.Contains(r.stderr, "hookd: list applications: connection refused by "+url+" (for 200ms)\n") ||
		!strings.Contains(r.stderr, "is hookd serve running at "+url) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "secret-token-value") {
		t.Fatalf("stderr shows the token: %q", r.stderr)
	}
}

// A server whose database cannot be reached answers 503, as hookd serve does: the SDK tries
// three times, each with the whole body and the same Idempotency-Key, and the command fails
// saying that nothing was written and to try again.
func TestClientServiceUnavailable(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		tries []string // body and Idempotency-Key of each request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		tries = append(tries, string(b)+" "+r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"code":"service_unavailable","detail":"The database is unavailable; nothing was written. Try again."}`)
	}))
	defer srv.Close()
	r := run(t, "", "send", "acme", "--event-type", "x", "--data", "{}", "--url", srv.URL, "--token", testAPIToken)
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, exitFailure, r.stderr)
	}
	for _, want := range []string{"503", "service_unavailable", "nothing was written: try again"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tries) != 3 || !strings.Contains(tries[0], `"eventType":"x"`) || tries[1] != tries[0] || tries[2] != tries[0] {
		t.Errorf("the server saw %d tries, want 3 alike, each with the whole body and one key: %q", len(tries), tries)
	}
}

// TestClientPathPrefix checks that a --url with a path reaches the API under that path, and that
// a POST carries an Idempotency-Key, so the SDK's retries cannot send a message twice.
func TestClientPathPrefix(t *testing.T) {
	t.Parallel()
	type seen struct{ path, key, auth string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet { // send counting the message's destinations
			io.WriteString(w, `{"data":[],"done":true,"iterator":"","prevIterator":null}`)
			return
		}
		select {
		case got <- seen{r.URL.Path, r.Header.Get("Idempotency-Key"), r.Header.Get("Authorization")}:
		default: // a second POST: the check below sees the first
		}
		io.WriteString(w, `{"id":"msg_1","eventType":"invoice.paid","payload":{},"timestamp":"2026-01-02T15:04:05Z"}`)
	}))
	t.Cleanup(srv.Close)
	r := run(t, `{"id":"in_1"}`, "send", "acme", "--event-type", "invoice.paid", "--url", srv.URL+"/hookd/", "--token", "tok_1")
	if r.code != exitOK || !strings.Contains(r.stdout, "msg_1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	s := <-got
	if s.path != "/hookd/api/v1/app/acme/msg" || !strings.HasPrefix(s.key, "hookd-cli-") || s.auth != "Bearer tok_1" {
		t.Fatalf("request: %+v", s)
	}
}

// TestClientEnv sets the environment, so it cannot run in parallel with the other tests.
func TestClientEnv(t *testing.T) {
	b := setupAPI(t)
	t.Setenv(envURL, b.url)
	t.Setenv(envToken, testAPIToken)
	if r := run(t, "", "app", "create", "--name", "FromEnv"); r.code != exitOK || !strings.Contains(r.stdout, "FromEnv") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// The flag wins over the environment.
	if r := run(t, "", "app", "list", "--token", "testsk_wrong"); r.code != exitFailure || !strings.Contains(r.stderr, "401") {
		t.Fatalf("--token over env: exit %d, stderr %q", r.code, r.stderr)
	}
	// --help does not show the token from the environment.
	if r := run(t, "", "app", "list", "--help"); r.code != exitOK || strings.Contains(r.stdout, testAPIToken) || !strings.Contains(r.stdout, "-token") {
		t.Fatalf("--help: exit %d, stdout %q", r.code, r.stdout)
	}
}

func TestClientHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"app", "--help"}, {"app", "create", "--help"}, {"app", "list", "--help"}, {"app", "get", "--help"}, {"app", "delete", "--help"},
		{"endpoint", "--help"}, {"endpoint", "add", "--help"}, {"endpoint", "list", "--help"}, {"endpoint", "get", "--help"},
		{"endpoint", "disable", "--help"}, {"endpoint", "enable", "--help"}, {"endpoint", "rotate-secret", "--help"}, {"endpoint", "secret", "--help"},
		{"event-type", "--help"}, {"event-type", "create", "--help"}, {"event-type", "list", "--help"}, {"event-type", "delete", "--help"},
		{"send", "--help"}, {"messages", "--help"}, {"attempts", "--help"}, {"resend", "--help"}, {"recover", "--help"},
	} {
		r := run(t, "", args...)
		if r.code != exitOK || !strings.Contains(r.stdout, "Usage: hookd "+args[0]) || r.stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2026-01-02T10:00:00Z", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), ""},
		{"2026-01-02T12:00:00+02:00", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), ""},
		{"1h", now.Add(-time.Hour), ""},
		{"90m", now.Add(-90 * time.Minute), ""},
		{"2d", now.Add(-48 * time.Hour), ""},
		{"", time.Time{}, "required"},
		{"0s", time.Time{}, "positive"},
		{"-1h", time.Time{}, "positive"},
		{"2027-01-01T00:00:00Z", time.Time{}, "in the future"},
		{"yesterday", time.Time{}, "neither"},
		{"xd", time.Time{}, "neither"},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseSince(%q) = %v, %v; want error ~%q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseArgsInterspersed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		pos  []string
		uid  string
		code int
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, "", exitOK},
		{[]string{"--uid", "u", "a", "b"}, []string{"a", "b"}, "u", exitOK},
		{[]string{"a", "--uid", "u", "b"}, []string{"a", "b"}, "u", exitOK},
		{[]string{"a", "b", "--uid=u"}, []string{"a", "b"}, "u", exitOK},
		{[]string{"a", "--", "-b"}, []string{"a", "-b"}, "", exitOK},
		{[]string{"a"}, nil, "", exitUsage},
		{[]string{"a", "b", "c"}, nil, "", exitUsage},
		{[]string{"a", "", "--uid", "u"}, nil, "u", exitUsage},
		{[]string{"a", "b", "--bogus"}, nil, "", exitUsage},
	}
	for _, tt := range tests {
		f := newFlags(&env{}, "test", "test A B")
		uid := f.String("uid", "", "")
		pos, err := f.parseArgs(tt.args, "A", "B")
		code := (&env{stderr: new(strings.Builder)}).report(err)
		if code != tt.code || strings.Join(pos, ",") != strings.Join(tt.pos, ",") || *uid != tt.uid {
			t.Errorf("parseArgs(%q) = %q, uid %q, exit %d; want %q, %q, %d", tt.args, pos, *uid, code, tt.pos, tt.uid, tt.code)
		}
	}
}

// An attempt that got no response says why in the attempts table, from the response Svix's
// server keeps for it.
func TestAttemptsTableSaysWhyNoResponse(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/gone"
	ln.Close() // nothing listens there now: connection refused
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", closed, "--uid", "down")
	var msg struct{ ID string }
	b.okJSON(t, &msg, `{"n":1}`, "send", "acme", "--event-type", "invoice.paid")
	b.waitAttempts(t, func(as []attemptJSON) bool { return len(as) > 0 }, "acme", "--msg", msg.ID)
	out := b.ok(t, "", "attempts", "acme", "--msg", msg.ID)
	if !strings.Contains(out, "ERROR") || !strings.Contains(out, "connection refused") {
		t.Fatalf("attempts table does not say why:\n%s", out)
	}
}
