package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/signature"
)

// freePort returns a port on 127.0.0.1 that nothing listens on (just now).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListening waits until something accepts connections at addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens at %s", addr)
		}
	}
}

// "hookd listen APP EP" receives the endpoint's deliveries from a running server, verifies them
// with the endpoint's secret, and refuses a request that is not signed with it.
func TestListenVerifiesDeliveries(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", "http://"+addr+"/hook", "--uid", "local")

	done := make(chan result)
	go func() { done <- b.cli(t, "", "listen", "acme", "local", "--count", "2") }()
	waitListening(t, addr)

	// A request signed with another secret is refused, and said so.
	forged, err := signature.NewSigner(signature.NewSecret())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"forged":true}`
	sig, err := forged.Sign("msg_forged", time.Now(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", strings.NewReader(body))
	req.Header.Set("webhook-id", "msg_forged")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a forged webhook was answered %d, want 400", resp.StatusCode)
	}

	var ids []string
	for i := range 2 {
		out := b.ok(t, `{"invoice":"in_`+strconv.Itoa(i)+`"}`, "send", "acme", "--event-type", "invoice.paid", "--json")
		var msg struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(out), &msg); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, msg.ID)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("hookd listen did not exit after two verified webhooks")
	}
	if r.code != exitOK {
		t.Fatalf("hookd listen: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "NOT VERIFIED POST /hook: ") {
		t.Fatalf("hookd listen printed:\n%s\nwant one refusal and two verified webhooks", r.stdout)
	}
	for i, id := range ids {
		if !strings.Contains(r.stdout, " verified "+id+` {"invoice":"in_`+strconv.Itoa(i)+`"}`) {
			t.Errorf("no verified line for %s in:\n%s", id, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "listening on http://"+addr+"/, verifying with the standard scheme") {
		t.Errorf("stderr %q does not say where it listens", r.stderr)
	}
}

// The quick start's order: "hookd listen APP EP --listen ADDR" binds at once, before the
// application and the endpoint exist, waits for them, and verifies the first attempt, which
// succeeds: "send --wait" returns once it did.
func TestListenBeforeTheEndpointExists(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"listen", "acme", "local", "--listen", addr, "--count", "1", "--url", b.url, "--token", testAPIToken},
			strings.NewReader(""), &stdout, &stderr)
	}()
	// Bound, and waiting, while the application does not exist.
	waitOutput(t, &stderr, "listening on http://"+addr+"/, waiting for endpoint local of application acme on hookd serve at "+b.url+" (at most 5m0s)\n")
	waitListening(t, addr)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", "http://"+addr+"/webhooks", "--uid", "local")
	out := b.ok(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", `{"invoice":"in_1"}`, "--wait", "30s")
	if !regexp.MustCompile(`(?m)^delivered: +1 of 1$`).MatchString(out) {
		t.Fatalf("send --wait:\n%s", out)
	}
	select {
	case c := <-code:
		if c != exitOK || !strings.Contains(stdout.String(), ` {"invoice":"in_1"}`) || !strings.Contains(stdout.String(), " verified msg_") {
			t.Fatalf("hookd listen: exit %d\nstdout: %s\nstderr: %s", c, &stdout, &stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hookd listen did not exit after one verified webhook")
	}
	if want := "listening on http://" + addr + "/, verifying with the standard scheme; Ctrl-C stops\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, &stderr)
	}
	var attempts []attemptJSON
	b.okJSON(t, &attempts, "", "attempts", "acme", "--endpoint", "local")
	if len(attempts) != 1 || attempts[0].ResponseStatusCode != http.StatusOK {
		t.Fatalf("attempts %+v, want one, answered 200", attempts)
	}
}

// A webhook that reaches "hookd listen --listen" before it has the endpoint's secret is held,
// and verified once the server answers.
func TestListenHoldsEarlyWebhook(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", "http://"+addr+"/", "--uid", "local")
	secret := strings.TrimSpace(b.ok(t, "", "endpoint", "secret", "acme", "local"))

	// listen asks a server address where nothing listens yet.
	gate := "127.0.0.1:" + strconv.Itoa(freePort(t))
	done := make(chan result, 1)
	go func() {
		done <- run(t, "", "listen", "acme", "local", "--listen", addr, "--count", "1", "--url", "http://"+gate, "--token", testAPIToken)
	}()
	waitListening(t, addr)

	signer, err := signature.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"early":true}`
	sig, err := signer.Sign("msg_early", time.Now(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
	req.Header.Set("webhook-id", "msg_early")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	<-wrote // the webhook is at the receiver, which has no secret yet

	// Now the server answers, through a proxy at the address listen asks.
	api, _ := url.Parse(b.url)
	ln, err := net.Listen("tcp", gate)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: httputil.NewSingleHostReverseProxy(api)}
	go func() { _ = proxy.Serve(ln) }()
	t.Cleanup(func() { proxy.Close() })

	if code := <-answered; code != http.StatusOK {
		t.Fatalf("the held webhook was answered %d, want 200", code)
	}
	r := <-done
	if r.code != exitOK || !strings.Contains(r.stdout, ` verified msg_early {"early":true}`) {
		t.Fatalf("hookd listen: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// "hookd listen --wait 0" does not wait for an endpoint that does not exist; a wait that runs
// out says how to create it.
func TestListenEndpointNotFound(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	for _, wait := range []string{"0", "300ms"} {
		r := b.cli(t, "", "listen", "acme", "nobody", "--listen", addr, "--wait", wait)
		if r.code != exitFailure || !strings.Contains(r.stderr, "get endpoint nobody: 404 Not Found") ||
			!strings.Contains(r.stderr, "hint: create it (hookd endpoint add acme --endpoint-url http://"+addr+"/ --uid nobody)") {
			t.Errorf("--wait %s: exit %d, stderr %q", wait, r.code, r.stderr)
		}
	}
}

func TestAddrMismatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, listening, want string }{
		{"http://127.0.0.1:9000/webhooks", "127.0.0.1:9000", ""},
		{"http://localhost:9000/", "127.0.0.1:9000", ""},
		{"http://127.0.0.1:9001/webhooks", "127.0.0.1:9000", "its URL http://127.0.0.1:9001/webhooks has port 9001, and this receiver listens on port 9000: its deliveries do not reach it"},
		{"https://example.com/hook", "127.0.0.1:9000", "is not plain http"},
	} {
		if got := addrMismatch(tc.url, tc.listening); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("addrMismatch(%q, %q) = %q, want %q", tc.url, tc.listening, got, tc.want)
		}
	}
}

// Given its address and secret alone, "hookd listen" verifies the Stripe-shaped scheme.
func TestListenStripeScheme(t *testing.T) {
	t.Parallel()
	secret := signature.NewSecret()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	done := make(chan result)
	go func() {
		done <- run(t, "", "listen", "--listen", addr, "--secret", secret, "--scheme", "stripe", "--count", "1", "--status", "202")
	}()
	waitListening(t, addr)
	s, err := signature.NewStripeSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"msg_1","type":"invoice.paid","occurredAt":"2026-01-01T00:00:00.000Z","data":{}}`)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(string(body)))
	for k, v := range s.Headers("invoice.paid", time.Now(), body) {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("a signed webhook was answered %d, want --status 202", resp.StatusCode)
	}
	r := <-done
	if r.code != exitOK || !strings.Contains(r.stdout, "verified msg_1 invoice.paid {") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestListenUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"listen"}, "give APP and EP, or both --listen and --secret"},
		{[]string{"listen", "acme"}, "give both APP and EP"},
		{[]string{"listen", "--listen", "127.0.0.1:0", "--secret", "whsec_x"}, "listen: "},
		{[]string{"listen", "--listen", "127.0.0.1:0", "--secret", signature.NewSecret(), "--scheme", "hmac"}, `unknown --scheme "hmac"`},
		{[]string{"listen", "--status", "42"}, "--status 42 is not an HTTP status"},
	} {
		r := run(t, "", c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("hookd %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), r.code, r.stderr, exitUsage, c.want)
		}
	}
	for raw, want := range map[string]string{
		"https://127.0.0.1:9000/": "not plain http",
		"http://example.com/hook": "not on this machine",
		"http://10.0.0.1:80/":     "not on this machine",
	} {
		if _, err := localAddr(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("localAddr(%q) = %v, want %q", raw, err, want)
		}
	}
	if got, err := localAddr("http://localhost/x"); err != nil || got != "localhost:80" {
		t.Errorf("localAddr(localhost) = %q, %v", got, err)
	}
}
