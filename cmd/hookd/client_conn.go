package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// The client commands (app, endpoint, event-type, send, messages, attempts, resend, recover)
// drive a running "hookd serve" through its HTTP API, which speaks Svix's, with the official
// Svix Go SDK.

const (
	defaultURL     = "http://127.0.0.1:8071"
	envURL         = "HOOKD_URL"
	envToken       = "HOOKD_TOKEN"
	requestTimeout = 30 * time.Second
	// defaultServerWait is how long a client command waits for hookd serve to accept
	// connections: "hookd serve &" and the next command, pasted together, start at once.
	defaultServerWait = 10 * time.Second
	// serverWaitNotice is how long the wait lasts before the command says it is waiting.
	serverWaitNotice = time.Second
	maxPageSize      = 250 // the most items Svix's list routes return at once
	defaultLimit     = 50
)

// clientFlags are the flags every client command takes.
type clientFlags struct {
	url   string
	token string
	json  bool
}

// addClientFlags registers --url (and its alias --server), --token and --json on f. Where the
// command has its own --url ("endpoint add"), only --server names the server. The environment
// is read after parsing, so that --help never shows a token.
func addClientFlags(f *flags) *clientFlags {
	cf := &clientFlags{}
	usage := "base URL of hookd serve (env " + envURL + "; default " + defaultURL + ")"
	if f.Lookup("url") == nil {
		f.StringVar(&cf.url, "url", "", usage)
		usage = "same as --url"
	}
	f.StringVar(&cf.url, "server", "", usage)
	f.StringVar(&cf.token, "token", "", "API token (env "+envToken+")")
	f.BoolVar(&cf.json, "json", false, "print JSON instead of a table")
	return cf
}

// conn is a connection to a hookd server: the Svix SDK pointed at it.
type conn struct {
	sdk  *svix.Svix
	base string // the server URL with any password removed, for messages
	json bool
	e    *env

	// For hookd's own fields, which the SDK does not know (endpoint_command.go's hookdCall).
	hc     *http.Client
	origin string // scheme://host of the server; hc's transport adds its path
	token  string
	waited *serverWaiter // how long hc waits for the server to accept connections
}

// connect resolves the URL and token (flag, then environment, then default) and returns a
// client. A missing token or a malformed URL is a usage error.
func (cf *clientFlags) connect(e *env) (*conn, error) {
	raw := cf.url
	if raw == "" {
		raw = os.Getenv(envURL)
	}
	if raw == "" {
		raw = defaultURL
	}
	token := cf.token
	if token == "" {
		token = os.Getenv(envToken)
	}
	u, err := parseHTTPURL(raw)
	if err != nil {
		return nil, usageErrorf(`pass the server's base URL with its scheme, e.g. --url http://127.0.0.1:8071 (or --server)`, "the server URL %v", err)
	}
	if token == "" {
		return nil, usageErrorf(`pass --token or set `+envToken+` to an API token of hookd serve`, "no API token")
	}
	var rt http.RoundTripper = http.DefaultTransport
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		// The SDK keeps only the scheme and host of its server URL; put the path back.
		rt = prefixTransport{prefix: p, next: rt}
	}
	wait := e.serverWait
	if wait <= 0 {
		wait = defaultServerWait
	}
	now := time.Now()
	sw := &serverWaiter{since: now, until: now.Add(wait), wait: wait, base: u.Redacted(), stderr: e.stderr}
	hc := &http.Client{Timeout: requestTimeout, Transport: serverWaitTransport{next: rewindTransport{rt}, w: sw}}
	sdk := svix.New(token, &svix.SvixOptions{ServerUrl: u, HTTPClient: hc})
	return &conn{sdk: sdk, base: u.Redacted(), json: cf.json, e: e, hc: hc, origin: u.Scheme + "://" + u.Host, token: token, waited: sw}, nil
}

// parseHTTPURL parses raw as an absolute http or https URL. Its error starts with raw, quoted,
// and says what is missing: the scheme (127.0.0.1:8071), the host, or a scheme other than http(s).
func parseHTTPURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("%q has no scheme: start it with http:// or https://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", raw, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q has the scheme %q: only http:// and https:// are accepted", raw, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", raw)
	}
	return u, nil
}

// once returns options that make a POST safe to retry: the SDK re-sends a request after a
// transport error or a 5xx, and the server replays its first answer for the same
// Idempotency-Key instead of acting twice.
func once() *svix.PostOptions {
	key := "hookd-cli-" + rand.Text()
	return &svix.PostOptions{IdempotencyKey: &key}
}

// rewindTransport sends a request's body from its start every time. The Svix Go SDK (v1.44.0)
// retries after a transport error or a 5xx by sending the same *http.Request again, its body
// already read: without this, each retry of a POST failed with "http: ContentLength=N with Body
// length 0" in place of the server's answer.
type rewindTransport struct{ next http.RoundTripper }

func (t rewindTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.GetBody == nil || r.Body == nil || r.Body == http.NoBody {
		return t.next.RoundTrip(r)
	}
	body, err := r.GetBody()
	_ = r.Body.Close() // a RoundTripper closes the body it is given
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body = body
	return t.next.RoundTrip(r2)
}

// serverWaiter is one command's wait for hookd serve to accept connections: it ends when a
// connection is accepted, or at until, whichever comes first.
type serverWaiter struct {
	since  time.Time
	until  time.Time
	wait   time.Duration // the whole wait, for messages
	base   string        // the server's URL, for the notice
	stderr io.Writer

	up      atomic.Bool // a connection was accepted: the server is up, a refusal now is no start-up
	noticed atomic.Bool // the notice that the command waits was printed
}

// serverWaitTransport sends a request again while hookd serve refuses the connection, until the
// server accepts one or the command's wait ends: a client command started together with
// "hookd serve &" finds the server's port not yet bound. A refused connection carried no byte of
// the request, so sending it again is safe whatever the method. Once the server accepted a
// connection, a refusal is reported at once.
type serverWaitTransport struct {
	next http.RoundTripper
	w    *serverWaiter
}

func (t serverWaitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rewinds := r.Body == nil || r.Body == http.NoBody || r.GetBody != nil
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 250*time.Millisecond) {
		resp, err := t.next.RoundTrip(r)
		if err == nil {
			t.w.up.Store(true)
			return resp, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || !rewinds || t.w.up.Load() || time.Now().Add(delay).After(t.w.until) {
			return nil, err
		}
		if time.Since(t.w.since) >= serverWaitNotice && !t.w.noticed.Swap(true) {
			fmt.Fprintf(t.w.stderr, "hookd: waiting for hookd serve to accept connections at %s (at most %s)\n", t.w.base, t.w.wait)
		}
		timer := time.NewTimer(delay)
		select {
		case <-r.Context().Done():
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
	}
}

// prefixTransport serves hookd mounted under a path (--url https://example.com/hookd).
type prefixTransport struct {
	prefix string
	next   http.RoundTripper
}

func (t prefixTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = t.prefix + r.URL.Path
	if r.URL.RawPath != "" {
		r2.URL.RawPath = t.prefix + r.URL.RawPath
	}
	return t.next.RoundTrip(r2)
}

// parseArgs parses flags placed before, between or after the positional arguments and returns
// the positionals: exactly len(names), or fewer where the names left out are optional, written in
// brackets ("[APP]"); names (e.g. "APP", "EP") appear in the usage errors.
func (f *flags) parseArgs(args []string, names ...string) ([]string, error) {
	hint := fmt.Sprintf("run \"%s --help\" for the usage", f.Name())
	var pos []string
	rest := args
	for {
		if err := f.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printHelp()
				return nil, err
			}
			return nil, usageErrorf(hint, "%v", err)
		}
		after := f.Args()
		if len(after) == 0 {
			break
		}
		if i := len(rest) - len(after); i > 0 && rest[i-1] == "--" {
			pos = append(pos, after...)
			break
		}
		pos = append(pos, after[0])
		rest = after[1:]
	}
	required := len(names)
	for required > 0 && strings.HasPrefix(names[required-1], "[") {
		required--
	}
	if len(pos) < required {
		return nil, usageErrorf(hint, "%s: missing %s", strings.TrimPrefix(f.Name(), "hookd "), strings.Join(names[len(pos):required], " "))
	}
	if len(pos) > len(names) {
		return nil, usageErrorf(hint, "%s: unexpected argument %q", strings.TrimPrefix(f.Name(), "hookd "), pos[len(names)])
	}
	for i, p := range pos {
		if p == "" {
			return nil, usageErrorf(hint, "%s: %s is empty", strings.TrimPrefix(f.Name(), "hookd "), names[i])
		}
	}
	return pos, nil
}

// subcommand is one verb of a command group ("app create").
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// runGroup dispatches "hookd <group> <verb> ...".
func runGroup(ctx context.Context, e *env, group, about string, subs []subcommand, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		printGroupHelp(e.stdout, group, about, subs)
		return nil
	}
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
		if len(args) > 0 && s.name == args[0] {
			return s.run(ctx, e, args[1:])
		}
	}
	hint := fmt.Sprintf("use one of: %s (\"hookd %s --help\" explains them)", strings.Join(names, ", "), group)
	if len(args) == 0 {
		return usageErrorf(hint, "%s: missing subcommand", group)
	}
	return usageErrorf(hint, "%s: unknown subcommand %q", group, args[0])
}

func printGroupHelp(w io.Writer, group, about string, subs []subcommand) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: hookd %s <subcommand> [arguments] [flags]\n\n%s\n\nSubcommands:\n", group, about)
	for _, s := range subs {
		fmt.Fprintf(&b, "  %-14s %s\n", s.name, s.summary)
	}
	fmt.Fprintf(&b, "\nRun \"hookd %s <subcommand> --help\" for its flags. Every subcommand takes\n--url (env %s, default %s), --token (env %s) and --json.\n", group, envURL, defaultURL, envToken)
	io.WriteString(w, b.String())
}

// clientHelp is the part of every client command's help about the connection.
const clientHelp = `
Talks to a running "hookd serve" at --url or --server (env ` + envURL + `, default ` + defaultURL + `)
with the API token --token (env ` + envToken + `). Prints a table, or JSON with --json.`

// limitFlag registers --limit.
func limitFlag(f *flags, what string) *int {
	return f.Int("limit", defaultLimit, "show at most this many "+what)
}

func checkLimit(f *flags, n int) error {
	if n < 1 {
		return usageErrorf(fmt.Sprintf("run \"%s --help\" for the flags", f.Name()), "--limit must be at least 1, got %d", n)
	}
	return nil
}
