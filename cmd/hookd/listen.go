package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/hookd/hookd/signature"
)

const listenUsage = `listen APP EP
       hookd listen --listen ADDR --secret S [--scheme standard|stripe]

Runs a local receiver that checks every webhook's signature and prints one
line per request: "verified" with the message id, event type and body, or
"NOT VERIFIED" and why. A verified webhook is answered --status (200), any
other request 400, so that hookd records a failed attempt and retries it.

With APP and EP (ids or uids) it asks the running "hookd serve" for the
endpoint: it listens on the host and port of the endpoint's URL, which must be
this machine's, and verifies with the endpoint's secret and scheme. Start
hookd serve with --allow-subnets 127.0.0.0/8 so that it may deliver to it.
The server is --url or --server (env HOOKD_URL, default http://127.0.0.1:8071),
the API token --token (env HOOKD_TOKEN).`

// maxListenBody bounds the body "hookd listen" reads from one request.
const maxListenBody = 4 << 20

// listenFlags are the settings of one "hookd listen".
type listenFlags struct {
	addr      string
	secrets   stringList
	scheme    string
	status    int
	count     int
	tolerance time.Duration
}

// runListen handles "hookd listen".
func runListen(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "listen", listenUsage)
	var lf listenFlags
	f.StringVar(&lf.addr, "listen", "", "address to listen on, e.g. 127.0.0.1:9000 (default: the endpoint URL's host and port)")
	f.Var(&lf.secrets, "secret", "signing secret to verify with (default: the endpoint's); repeat for several keys")
	f.StringVar(&lf.scheme, "scheme", "", `"standard" (webhook-* or svix-* headers) or "stripe" (t=,v1=); default: the endpoint's, else standard`)
	f.IntVar(&lf.status, "status", http.StatusOK, "status to answer a verified webhook with (e.g. 500 to watch the retries)")
	f.IntVar(&lf.count, "count", 0, "exit after this many verified webhooks (0: run until interrupted)")
	f.DurationVar(&lf.tolerance, "tolerance", signature.DefaultTolerance, "how far a webhook's timestamp may be from now")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "[APP]", "[EP]")
	if err != nil {
		return err
	}
	hint := `run "hookd listen --help" for the flags`
	switch {
	case len(pos) == 1:
		return usageErrorf(hint, "listen: give both APP and EP, or neither with --listen and --secret")
	case lf.status < 200 || lf.status > 599:
		return usageErrorf(hint, "listen: --status %d is not an HTTP status (200 to 599)", lf.status)
	case lf.count < 0:
		return usageErrorf(hint, "listen: --count must be 0 or more")
	}
	if len(pos) == 2 {
		if err := lf.fromEndpoint(ctx, e, cf, pos[0], pos[1]); err != nil {
			return err
		}
	}
	if lf.addr == "" || len(lf.secrets) == 0 {
		return usageErrorf(hint, "listen: give APP and EP, or both --listen and --secret")
	}
	check, err := lf.verifier()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", lf.addr)
	if err != nil {
		return failf("choose another --listen address, or stop what holds this one", "listen: %v", err)
	}
	rcv := &listener{e: e, check: check, status: lf.status, count: lf.count, done: make(chan struct{})}
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(e.stderr, "listening on http://%s/, verifying with the %s scheme; Ctrl-C stops\n", ln.Addr(), lf.scheme)
	select {
	case <-ctx.Done():
	case <-rcv.done:
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return nil
}

// fromEndpoint fills what the flags leave unset from the endpoint APP EP of the running server.
func (lf *listenFlags) fromEndpoint(ctx context.Context, e *env, cf *clientFlags, app, ep string) error {
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	var out struct {
		URL    string `json:"url"`
		Scheme string `json:"scheme"`
	}
	if err := c.hookdCall(ctx, "get endpoint "+ep, http.MethodGet, endpointPath(app, ep), nil, &out); err != nil {
		return err
	}
	if lf.addr == "" {
		addr, err := localAddr(out.URL)
		if err != nil {
			return usageErrorf("point the endpoint at http://127.0.0.1:PORT/..., or pass --listen", "listen: endpoint %s: %v", ep, err)
		}
		lf.addr = addr
	}
	if len(lf.secrets) == 0 {
		s, err := c.sdk.Endpoint.GetSecret(ctx, app, ep)
		if err != nil {
			return c.fail("get the secret of endpoint "+ep, err)
		}
		lf.secrets = append(lf.secrets, s.Key)
	}
	if lf.scheme == "" {
		lf.scheme = out.Scheme
	}
	return nil
}

// localAddr returns the host:port to listen on for an endpoint URL on this machine.
func localAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("its URL %q cannot be parsed", raw)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("its URL %s is not plain http, which a local receiver serves", raw)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("its URL %s is not on this machine (127.0.0.1, ::1 or localhost)", raw)
	}
	return net.JoinHostPort(host, port), nil
}

// verifier returns the signature check of the chosen scheme.
func (lf *listenFlags) verifier() (func(body []byte, h http.Header) error, error) {
	tol := lf.tolerance
	if tol == 0 {
		tol = -1
	}
	switch lf.scheme {
	case "", "standard", "svix":
		lf.scheme = "standard"
		v, err := signature.NewVerifier(lf.secrets...)
		if err != nil {
			return nil, usageErrorf(`pass the endpoint's whsec_ secret (or a whpk_ public key)`, "listen: %v", err)
		}
		v.Tolerance = tol
		return v.Verify, nil
	case "stripe", "envelope":
		v, err := signature.NewStripeVerifier(lf.secrets...)
		if err != nil {
			return nil, usageErrorf(`pass the endpoint's secret exactly as it was shown`, "listen: %v", err)
		}
		v.Tolerance = tol
		return v.Verify, nil
	default:
		return nil, usageErrorf(`use --scheme standard or --scheme stripe`, "listen: unknown --scheme %q", lf.scheme)
	}
}

// listener is the receiver: it checks each request and prints a line for it.
type listener struct {
	e      *env
	check  func(body []byte, h http.Header) error
	status int
	count  int

	mu       sync.Mutex // orders the printed lines and counts the verified webhooks
	verified int
	done     chan struct{} // closed after count verified webhooks
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxListenBody+1))
	at := time.Now().Format("15:04:05")
	switch {
	case err != nil:
		l.printf("%s NOT VERIFIED %s %s: the body could not be read: %v\n", at, r.Method, r.URL.Path, err)
		http.Error(w, "body not read", http.StatusBadRequest)
		return
	case len(body) > maxListenBody:
		l.printf("%s NOT VERIFIED %s %s: the body is over %d MiB\n", at, r.Method, r.URL.Path, maxListenBody>>20)
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := l.check(body, r.Header); err != nil {
		l.printf("%s NOT VERIFIED %s %s: %v\n", at, r.Method, r.URL.Path, err)
		http.Error(w, "signature not verified", http.StatusBadRequest)
		return
	}
	what := describe(r.Header, body)
	w.WriteHeader(l.status)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.e.stdout, "%s verified %s %s\n", at, what, oneLine(string(body), 300))
	l.verified++
	if l.count > 0 && l.verified == l.count {
		close(l.done)
	}
}

func (l *listener) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.e.stdout, format, args...)
}

// describe names a webhook: its message id and, in the envelope scheme's body, its event type.
// The id is the webhook-id (or svix-id) header, else the envelope's "id".
func describe(h http.Header, body []byte) string {
	var env struct {
		ID   any `json:"id"`
		Type any `json:"type"`
	}
	_ = json.Unmarshal(body, &env) // a body that is no JSON object names nothing
	id := cmpOr(h.Get("webhook-id"), h.Get("svix-id"))
	if id == "" {
		id, _ = env.ID.(string)
	}
	what := cmpOr(id, "-")
	if typ, _ := env.Type.(string); typ != "" && h.Get("webhook-id") == "" && h.Get("svix-id") == "" {
		what += " " + typ
	}
	return what
}
