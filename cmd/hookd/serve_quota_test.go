package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// countingTransport counts the requests an SDK makes, retries included.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// sdkFor returns the official Go SDK (v1.44.0) pointed at s, counting its requests.
func sdkFor(t *testing.T, s *served) (*svix.Svix, *countingTransport) {
	t.Helper()
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{}
	return svix.New(testAdminToken, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Transport: ct, Timeout: 10 * time.Second}}), ct
}

// --max-endpoints-per-app: past it, a 422 in Svix's shape naming the limit and the flag, and
// nothing stored; the Go SDK reports the 422.
func TestServeMaxEndpointsPerApp(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--max-endpoints-per-app", "2", "--workers", "2")
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	ep := `{"url":"https://receiver.example/hook"}`
	for range 2 {
		mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/acme/endpoint", testAdminToken, ep)
	}
	code, body := call(t, http.MethodPost, s.url+"/api/v1/app/acme/endpoint", testAdminToken, ep)
	var out struct {
		Detail []struct {
			Loc  []string `json:"loc"`
			Msg  string   `json:"msg"`
			Type string   `json:"type"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || code != http.StatusUnprocessableEntity || len(out.Detail) != 1 ||
		strings.Join(out.Detail[0].Loc, ".") != "body" || out.Detail[0].Type != "value_error" ||
		!strings.Contains(out.Detail[0].Msg, "2 endpoints") || !strings.Contains(out.Detail[0].Msg, "--max-endpoints-per-app") {
		t.Fatalf("a third endpoint: %d %s, want a 422 naming the limit of 2 and the flag", code, body)
	}
	sdk, _ := sdkFor(t, s)
	ctx := context.Background()
	_, err := sdk.Endpoint.Create(ctx, "acme", &svix.EndpointIn{Url: "https://receiver.example/sdk"})
	var se *svix.Error
	if !errors.As(err, &se) || se.Status() != http.StatusUnprocessableEntity {
		t.Fatalf("the SDK's third endpoint: %v, want a svix.Error of status 422", err)
	}
	list, err := sdk.Endpoint.List(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 {
		t.Fatalf("%d endpoints stored, want 2", len(list.Data))
	}
	// Another application has its own places.
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Other","uid":"other"}`)
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/other/endpoint", testAdminToken, ep)
}

// --max-messages-per-second-per-app: past the burst, a 429 with Retry-After, nothing stored; the
// Go SDK does not retry it; a retry under the same Idempotency-Key after Retry-After is
// written, not replayed as the 429.
func TestServeMessageRatePerApp(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--max-messages-per-second-per-app", "1", "--message-burst-per-app", "2", "--workers", "2")
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Other","uid":"other"}`)
	msg := `{"eventType":"invoice.paid","payload":{"n":1}}`
	for range 2 {
		mustCall(t, http.StatusAccepted, http.MethodPost, s.url+"/api/v1/app/acme/msg", testAdminToken, msg)
	}

	post := func(key string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.url+"/api/v1/app/acme/msg", strings.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("retry-me")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	retryAfter, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	var apiErr struct{ Code, Detail string }
	_ = json.Unmarshal(body, &apiErr)
	if resp.StatusCode != http.StatusTooManyRequests || err != nil || retryAfter < 1 || retryAfter > 2 || apiErr.Code != "too_many_requests" {
		t.Fatalf("a third message: %d, Retry-After %q, body %s; want 429, Retry-After 1, code too_many_requests",
			resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	sdk, counted := sdkFor(t, s)
	ctx := context.Background()
	_, err = sdk.Message.Create(ctx, "acme", &svix.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"n": 2}})
	var se *svix.Error
	if !errors.As(err, &se) || se.Status() != http.StatusTooManyRequests {
		t.Fatalf("the SDK's message past the rate: %v, want a svix.Error of status 429", err)
	}
	if n := counted.n.Load(); n != 1 {
		t.Fatalf("the SDK made %d requests for one refused message, want 1 (it retries 5xx only)", n)
	}
	list, err := sdk.Message.List(ctx, "acme", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 {
		t.Fatalf("%d messages stored, want the 2 admitted", len(list.Data))
	}
	mustCall(t, http.StatusAccepted, http.MethodPost, s.url+"/api/v1/app/other/msg", testAdminToken, msg)

	time.Sleep(time.Duration(retryAfter) * time.Second)
	resp = post("retry-me")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry after Retry-After under the same key: %d (replayed %q) %s, want a new 202",
			resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), body)
	}
}

// --metrics-token: /metrics answers 401 without it, and the metrics with it.
func TestServeMetricsToken(t *testing.T) {
	t.Parallel()
	const metricsToken = "metrics_0123456789abcdef0123456789abcdef"
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--metrics-token", metricsToken, "--workers", "2")
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	for _, token := range []string{"", testAdminToken, metricsToken + "x"} {
		code, body := call(t, http.MethodGet, s.url+"/metrics", token, "")
		if code != http.StatusUnauthorized || strings.Contains(body, "hookd_") {
			t.Errorf("/metrics with token %q: %d %s, want 401 and no metrics", token, code, body)
		}
	}
	code, body := call(t, http.MethodGet, s.url+"/metrics", metricsToken, "")
	if code != http.StatusOK || !strings.Contains(body, "\nhookd_store_up 1\n") {
		t.Fatalf("/metrics with the metrics token: %d %s", code, body)
	}
}

var metricsOnRE = regexp.MustCompile(`(?m)^metrics on (http://\S+)/metrics$`)

// --metrics-listen: /metrics moves to its own address (there with --metrics-token too), and the
// API's address no longer serves it.
func TestServeMetricsListen(t *testing.T) {
	t.Parallel()
	const metricsToken = "metrics_0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name  string
		token string
	}{{"alone", ""}, {"with a token", metricsToken}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"--listen", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(t.TempDir(), "hookd.db"),
				"--token", testAdminToken, "--metrics-listen", "127.0.0.1:0", "--workers", "2"}
			if tc.token != "" {
				args = append(args, "--metrics-token", tc.token)
			}
			s := startServe(t, args...)
			m := metricsOnRE.FindStringSubmatch(s.stderr.String())
			if m == nil {
				t.Fatalf("no metrics address on stderr:\n%s", s.stderr)
			}
			if m[1] == s.url {
				t.Fatalf("metrics on the API's address %s", s.url)
			}
			for _, token := range []string{"", testAdminToken, metricsToken} {
				code, body := call(t, http.MethodGet, s.url+"/metrics", token, "")
				if code == http.StatusOK || strings.Contains(body, "hookd_") {
					t.Errorf("/metrics on the API's address with token %q: %d %s, want no metrics", token, code, body)
				}
			}
			mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/health/", "", "")
			code, body := call(t, http.MethodGet, m[1]+"/metrics", tc.token, "")
			if code != http.StatusOK || !strings.Contains(body, "\nhookd_store_up 1\n") {
				t.Fatalf("/metrics on its own address: %d %s", code, body)
			}
			if tc.token != "" {
				if code, _ := call(t, http.MethodGet, m[1]+"/metrics", "", ""); code != http.StatusUnauthorized {
					t.Errorf("/metrics on its own address without the token: %d, want 401", code)
				}
			}
			if code, _ := call(t, http.MethodGet, m[1]+"/api/v1/app", testAdminToken, ""); code != http.StatusNotFound {
				t.Errorf("the API on the metrics address: %d, want 404", code)
			}
			s.stop(t)
		})
	}
}

// A token shorter than 32 characters stops start-up with exit 2 and says how to make one; the
// generated one is long enough.
func TestServeTokenLength(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	for _, args := range [][]string{
		{"--token", "hookd_sk_ci_1733100000000000000"}, // 31 characters
		{"--metrics-token", "short_metrics_token"},
	} {
		_, err := parseServeConfig(quietEnv(), args, noEnv)
		var ee *exitError
		want := "use at least 32; make one with: openssl rand -hex 32"
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "characters") {
			t.Errorf("serve %q: %v; want exit 2 and %q", args, err, want)
		} else if strings.Contains(err.Error(), args[1]) {
			t.Errorf("serve %q: the token is echoed: %q", args, err)
		}
	}
	_, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		return map[string]string{"HOOKD_TOKEN": "from-env"}[k], k == "HOOKD_TOKEN"
	})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "HOOKD_TOKEN (for --token): is 8 characters, use at least 32") {
		t.Errorf("a short HOOKD_TOKEN: %v, want a usage error naming the variable", err)
	}

	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"), "--workers", "2")
	m := adminTokenRE.FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("no generated token on stderr:\n%s", s.stderr)
	}
	if len(m[1]) < minTokenLen {
		t.Fatalf("the generated token has %d characters, fewer than %d", len(m[1]), minTokenLen)
	}
	s.stop(t)
	// The generated token passes the check that --token gets.
	c, err := parseServeConfig(quietEnv(), []string{"--token", m[1]}, noEnv)
	if err != nil || c.token != m[1] {
		t.Fatalf("--token with the generated token: %v", err)
	}
}

// The quota flags accept what they say and refuse the rest with exit 2.
func TestServeQuotaFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*serveConfig, error) {
		return parseServeConfig(quietEnv(), args, func(string) (string, bool) { return "", false })
	}
	c, err := parse("--max-endpoints-per-app", "none", "--max-messages-per-second-per-app", "none")
	if err != nil || c.maxEndpoints != -1 || c.messageRate != 0 {
		t.Fatalf("none for both: %+v, %v", c, err)
	}
	c, err = parse("--max-endpoints-per-app", "7", "--max-messages-per-second-per-app", "2.5", "--message-burst-per-app", "9",
		"--metrics-listen", "127.0.0.1:9100")
	if err != nil || c.maxEndpoints != 7 || c.messageRate != 2.5 || c.messageBurst != 9 || c.metricsListen != "127.0.0.1:9100" || c.listen != "127.0.0.1:8071" {
		t.Fatalf("values: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-endpoints-per-app", "0"}, `--max-endpoints-per-app "0": use a whole number from 1`},
		{[]string{"--max-endpoints-per-app", "lots"}, `--max-endpoints-per-app "lots"`},
		{[]string{"--max-messages-per-second-per-app", "0"}, `--max-messages-per-second-per-app "0": use messages per second above 0`},
		{[]string{"--max-messages-per-second-per-app", "-5"}, `--max-messages-per-second-per-app "-5"`},
		{[]string{"--max-messages-per-second-per-app", "NaN"}, `--max-messages-per-second-per-app "NaN"`},
		{[]string{"--message-burst-per-app", "0"}, `--message-burst-per-app "0": use a whole number from 1`},
		{[]string{"--metrics-listen", "9100"}, `--metrics-listen "9100": use HOST:PORT`},
	} {
		r := run(t, "", append([]string{"serve"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// serve --help says to pass the secrets through the environment and how to make a token.
func TestServeHelpOnSecrets(t *testing.T) {
	t.Parallel()
	r := run(t, "", "serve", "--help")
	for _, want := range []string{"openssl rand -hex 32", "flags show in ps", "HOOKD_TOKEN", "HOOKD_MAIN_KEY",
		"--metrics-listen", "--metrics-token", "--max-endpoints-per-app", "--max-messages-per-second-per-app"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}

// The pages' "send example" past the message rate is a 429 saying so, not a 500.
func TestServeMessageRateOnThePages(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--max-messages-per-second-per-app", "0.01", "--message-burst-per-app", "1", "--workers", "2")
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.url)
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, _ := post("/ui/login", url.Values{"token": {testAdminToken}}); code != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", code, body)
	}
	form := url.Values{"eventType": {"invoice.paid"}, "payload": {`{"n":1}`}}
	if code, body, _ := post("/ui/app/acme/send", form); code != http.StatusSeeOther {
		t.Fatalf("the first example: %d %s", code, body)
	}
	code, body, h := post("/ui/app/acme/send", form)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(body, "messages a second") {
		t.Fatalf("an example past the rate: %d (Retry-After %q), want 429 saying why\n%s", code, h.Get("Retry-After"), body)
	}
}
