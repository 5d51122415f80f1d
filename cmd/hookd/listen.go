package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/hookd/hookd/signature"
)

const listenUsage = `listen APP EP [--listen ADDR] [--wait D]
       hookd listen --listen ADDR --secret S [--scheme standard|stripe]

Runs a local receiver that checks every webhook's signature and prints one
line per request: "verified" with the message id, event type and body, or
"NOT VERIFIED" and why. A verified webhook is answered --status (200), any
other request 400, so that hookd records a failed attempt and retries it.

With APP and EP (ids or uids) it asks the running "hookd serve" for the
endpoint's secret and scheme, and listens on --listen, or else on the host
and port of the endpoint's URL, which must be this machine's. It waits, at
most --wait, for hookd serve to answer and for the application and the
endpoint to exist. With --listen it binds the address at once, before it asks,
and holds a webhook that arrives before it has the secret until it has it: it
can be started before the application and the endpoint are created. Start
hookd serve with --allow-subnets 127.0.0.0/8 so that it may deliver to it.
The server is --url or --server (env HOOKD_URL, default http://127.0.0.1:8071),
the API token --token (env HOOKD_TOKEN).`

// maxListenBody bounds the body "hookd listen" reads from one request.
const maxListenBody = 4 << 20

// defaultListenWait is how long "hookd listen APP EP" waits for the server and the endpoint: long
// enough for someone to type the commands that create them.
const defaultListenWait = 5 * time.Minute

// holdLimit bounds how long a webhook that arrives before the endpoint's secret is known is held.
const holdLimit = 30 * time.Second

// listenFlags are the settings of one "hookd listen".
type listenFlags struct {
	addr      string
	secrets   stringList
	scheme    string
	status    int
	count     int
	tolerance time.Duration
	wait      time.Duration
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
	f.DurationVar(&lf.wait, "wait", defaultListenWait, "with APP and EP: how long to wait for hookd serve and the endpoint (0: do not wait)")
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
	case lf.wait < 0:
		return usageErrorf(hint, "listen: --wait must be 0 or more")
	case len(pos) == 0 && (lf.addr == "" || len(lf.secrets) == 0):
		return usageErrorf(hint, "listen: give APP and EP, or both --listen and --secret")
	}
	var src *endpointSource
	if len(pos) == 2 {
		c, err := cf.connect(e)
		if err != nil {
			return err
		}
		c.waited.noticed.Store(true) // listen says itself that it waits
		src = &endpointSource{c: c, app: pos[0], ep: pos[1], deadline: time.Now().Add(lf.wait)}
		if lf.addr == "" { // the address is the endpoint's: ask before binding
			if err := lf.fromEndpoint(ctx, src); err != nil || ctx.Err() != nil {
				return err
			}
			src = nil
		}
	}
	var check func(body []byte, h http.Header) error
	if src == nil {
		if check, err = lf.verifier(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", lf.addr)
	if err != nil {
		return failf("choose another --listen address, or stop what holds this one", "listen: %v", err)
	}
	rcv := &listener{e: e, status: lf.status, count: lf.count, ready: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{})}
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		close(rcv.quit) // a webhook still held is answered, so that Shutdown need not wait for it
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if src != nil { // bound first; now the endpoint's secret and scheme
		src.listening = ln.Addr().String()
		if err := lf.fromEndpoint(ctx, src); err != nil || ctx.Err() != nil {
			return err
		}
		if check, err = lf.verifier(); err != nil {
			return err
		}
	}
	rcv.setCheck(check)
	fmt.Fprintf(e.stderr, "listening on http://%s/, verifying with the %s scheme; Ctrl-C stops\n", ln.Addr(), lf.scheme)
	select {
	case <-ctx.Done():
	case <-rcv.done:
	}
	return nil
}

// endpointSource is the endpoint "hookd listen APP EP" verifies for, and how long to wait for it.
type endpointSource struct {
	c         *conn
	app, ep   string
	deadline  time.Time // the wait for the server and the endpoint ends here
	listening string    // the address already bound ("" when none is yet), for the messages
}

// fromEndpoint fills what the flags leave unset from the endpoint of src on the running server.
// While the server refuses connections or answers that the application or the endpoint does not
// exist, it asks again, until src.deadline, saying once on stderr that it waits. It returns nil
// with nothing filled when ctx ends first.
func (lf *listenFlags) fromEndpoint(ctx context.Context, src *endpointSource) error {
	c, e := src.c, src.c.e
	op := "get endpoint " + src.ep
	var out struct {
		URL    string `json:"url"`
		Scheme string `json:"scheme"`
	}
	for delay, noticed := 50*time.Millisecond, false; ; delay = min(2*delay, 500*time.Millisecond) {
		status, body, err := c.hookdRequest(ctx, http.MethodGet, endpointPath(src.app, src.ep), nil, &out)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && status < 300 {
			if err := json.Unmarshal(body, &out); err != nil {
				return apiFailure(op, status, body, err)
			}
			break
		}
		switch {
		case err != nil && !errors.Is(err, syscall.ECONNREFUSED):
			return c.fail(op, err)
		case err == nil && status != http.StatusNotFound:
			return apiFailure(op, status, body, nil)
		}
		// The server is starting, or the application or the endpoint is not created yet.
		if time.Now().Add(delay).After(src.deadline) {
			if err != nil {
				return c.fail(op, err)
			}
			xe := apiFailure(op, status, body, nil).(*exitError)
			at := cmpOr(src.listening, "127.0.0.1:PORT")
			xe.hint = fmt.Sprintf("create it (hookd endpoint add %s --endpoint-url http://%s/ --uid %s), or check APP and EP (hookd endpoint list %s), or wait longer (--wait)", src.app, at, src.ep, src.app)
			return xe
		}
		if !noticed {
			noticed = true
			where := ""
			if src.listening != "" {
				where = "listening on http://" + src.listening + "/, "
			}
			fmt.Fprintf(e.stderr, "%swaiting for endpoint %s of application %s on hookd serve at %s (at most %s)\n", where, src.ep, src.app, c.base, time.Until(src.deadline).Round(time.Second))
		}
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
	if lf.addr == "" {
		addr, err := localAddr(out.URL)
		if err != nil {
			return usageErrorf("point the endpoint at http://127.0.0.1:PORT/..., or pass --listen", "listen: endpoint %s: %v", src.ep, err)
		}
		lf.addr = addr
	} else if warn := addrMismatch(out.URL, src.listening); warn != "" {
		fmt.Fprintf(e.stderr, "hookd: warning: endpoint %s: %s\n", src.ep, warn)
	}
	if len(lf.secrets) == 0 {
		s, err := c.sdk.Endpoint.GetSecret(ctx, src.app, src.ep)
		if err != nil {
			return c.fail("get the secret of endpoint "+src.ep, err)
		}
		lf.secrets = append(lf.secrets, s.Key)
	}
	if lf.scheme == "" {
		lf.scheme = out.Scheme
	}
	return nil
}

// addrMismatch says why the deliveries to the endpoint URL raw do not reach a receiver bound at
// listening: the URL is not this machine's, or its port is another; "" when they do.
func addrMismatch(raw, listening string) string {
	ep, err := localAddr(raw)
	if err != nil {
		return err.Error() + ", so its deliveries do not reach this receiver"
	}
	_, epPort, _ := net.SplitHostPort(ep)
	_, port, _ := net.SplitHostPort(listening)
	if epPort != port {
		return fmt.Sprintf("its URL %s has port %s, and this receiver listens on port %s: its deliveries do not reach it", raw, epPort, port)
	}
	return ""
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
	check  func(body []byte, h http.Header) error // set once, before ready is closed
	ready  chan struct{}                          // closed when check is set
	quit   chan struct{}                          // closed when listen stops
	status int
	count  int

	mu       sync.Mutex // orders the printed lines and counts the verified webhooks
	verified int
	done     chan struct{} // closed after count verified webhooks
}

// setCheck gives the listener its signature check: the requests held until then go on.
func (l *listener) setCheck(check func(body []byte, h http.Header) error) {
	l.check = check
	close(l.ready)
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hold := time.NewTimer(holdLimit)
	select {
	case <-l.ready:
		hold.Stop()
	case <-r.Context().Done(): // the sender gave up
		hold.Stop()
		return
	case <-l.quit:
		hold.Stop()
		http.Error(w, "receiver stopping", http.StatusServiceUnavailable)
		return
	case <-hold.C:
		l.printf("%s NOT VERIFIED %s %s: the endpoint's secret is not known yet (hookd serve or the endpoint did not answer within %s)\n",
			time.Now().Format("15:04:05"), r.Method, r.URL.Path, holdLimit)
		http.Error(w, "receiver not ready", http.StatusServiceUnavailable)
		return
	}
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
