package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
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
	maxPageSize    = 250 // the most items Svix's list routes return at once
	defaultLimit   = 50
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
	hc := &http.Client{Timeout: requestTimeout, Transport: rewindTransport{rt}}
	sdk := svix.New(token, &svix.SvixOptions{ServerUrl: u, HTTPClient: hc})
	return &conn{sdk: sdk, base: u.Redacted(), json: cf.json, e: e, hc: hc, origin: u.Scheme + "://" + u.Host, token: token}, nil
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

// fail turns an error of the SDK into the command's error: an API error with its status, code
// and detail, or a transport error, each with a hint. op names what was attempted.
func (c *conn) fail(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return failf("", "%s: interrupted", op)
	}
	var se *svix.Error
	if errors.As(err, &se) && se.Status() != 0 {
		return apiFailure(op, se.Status(), se.Body(), err)
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return failf(fmt.Sprintf("is hookd serve running at %s? (set --url / --server or %s)", c.base, envURL), "%s: connection refused by %s", op, c.base)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return failf(fmt.Sprintf("the server at %s did not answer within %s; is it overloaded or the wrong address?", c.base, requestTimeout), "%s: timed out", op)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return failf("check the host name in --url / --server / "+envURL, "%s: cannot resolve %s: %v", op, dns.Name, dns.Err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return failf(fmt.Sprintf("is hookd serve running at %s? (set --url / --server or %s)", c.base, envURL), "%s: %v", op, ue.Err)
	}
	return failf("", "%s: %v", op, err)
}

// apiFailure describes an answer of the API that is not a success, or a success the SDK could
// not read.
func apiFailure(op string, status int, body []byte, err error) error {
	if status < 300 {
		return failf("the server's answer does not match the Svix API the client speaks; is the server URL a hookd server of the same version?", "%s: unexpected response (%d): %v", op, status, err)
	}
	code, detail := errorBody(body)
	msg := fmt.Sprintf("%s: %d %s", op, status, http.StatusText(status))
	if code != "" {
		msg += " (" + code + ")"
	}
	if detail != "" {
		msg += ": " + detail
	}
	return &exitError{code: exitFailure, msg: msg, hint: errorHint(status, code), status: status}
}

// errorHint says what to do about an API error.
func errorHint(status int, code string) string {
	switch {
	case code == "endpoint_disabled":
		return `enable the endpoint first: "hookd endpoint enable APP EP"`
	case status == http.StatusUnauthorized:
		return "check --token / " + envToken
	case status == http.StatusForbidden:
		return "this token may not do that; use an admin token (--token / " + envToken + ")"
	case status == http.StatusNotFound:
		return `check the id or uid ("hookd app list", "hookd endpoint list APP", "hookd messages APP")`
	case status == http.StatusConflict:
		return "an entity with that uid, event id or name exists already"
	case status == http.StatusRequestEntityTooLarge:
		return "the payload is larger than the server accepts"
	case status == http.StatusUnprocessableEntity:
		return "the server rejected the field named above; the command's --help describes it"
	case status == http.StatusTooManyRequests:
		return "the server is rate limiting; try again shortly"
	case status == http.StatusServiceUnavailable:
		return "the server's database cannot be reached just now, and nothing was written: try again; if it lasts, hookd serve's log says why"
	case status >= 500:
		return "the server failed; its log has the details"
	}
	return ""
}

// errorBody reads Svix's error body: {"code", "detail"}, or a 422's {"detail": [{loc, msg}]}.
func errorBody(body []byte) (code, detail string) {
	var b struct {
		Code   string          `json:"code"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &b) != nil {
		s := strings.TrimSpace(string(body))
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		return "", s
	}
	var s string
	if json.Unmarshal(b.Detail, &s) == nil {
		return b.Code, s
	}
	var fields []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(b.Detail, &fields) == nil {
		var parts []string
		for _, f := range fields {
			loc := make([]string, 0, len(f.Loc))
			for _, l := range f.Loc {
				loc = append(loc, fmt.Sprint(l))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+f.Msg)
		}
		if b.Code == "" {
			b.Code = "validation_error"
		}
		return b.Code, strings.Join(parts, "; ")
	}
	return b.Code, string(b.Detail)
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

// printJSON writes v as indented JSON.
func (c *conn) printJSON(v any) error {
	enc := json.NewEncoder(c.e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return failf("", "write JSON: %v", err)
	}
	return nil
}

// printTable writes rows under header, aligned in columns.
func (c *conn) printTable(header []string, rows [][]string) {
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// printFields writes name/value pairs, one a line, values aligned.
func (c *conn) printFields(pairs ...[2]string) {
	tw := tabwriter.NewWriter(c.e.stdout, 0, 4, 2, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s:\t%s\n", p[0], p[1])
	}
	tw.Flush()
}

// noteMore tells (on stderr, so that --json stays clean) that a list was cut at limit.
func (c *conn) noteMore(more bool, limit int) {
	if more {
		fmt.Fprintf(c.e.stderr, "(showing the first %d; there may be more: pass --limit)\n", limit)
	}
}

// page is one page of a Svix list.
type page[T any] struct {
	data     []T
	done     bool
	iterator *string
}

// printList fetches up to limit items with fetch and prints them: JSON with --json, else a table
// of header and one row per item; a list cut at the limit is noted on stderr. what names the list
// in an error ("applications"); t is what the list's route addresses.
func printList[T any](ctx context.Context, c *conn, what string, t target, limit int, fetch func(iterator *string, n int32) (page[T], error), header []string, row func(*T) []string) error {
	items, more, err := collect(limit, fetch)
	if err != nil {
		return c.failAt(ctx, "list "+what, t, err)
	}
	c.noteMore(more, limit)
	if c.json {
		return c.printJSON(items)
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		rows = append(rows, row(&items[i]))
	}
	c.printTable(header, rows)
	return nil
}

// collect fetches pages until limit items or the end; more reports that the list was cut.
func collect[T any](limit int, fetch func(iterator *string, n int32) (page[T], error)) (items []T, more bool, err error) {
	var iter *string
	for {
		n := min(limit-len(items), maxPageSize)
		p, err := fetch(iter, int32(n))
		if err != nil {
			return nil, false, err
		}
		items = append(items, p.data...)
		last := p.done || p.iterator == nil || *p.iterator == "" || len(p.data) == 0 ||
			(iter != nil && *p.iterator == *iter)
		if len(items) >= limit {
			return items[:limit], !last || len(items) > limit, nil
		}
		if last {
			return items, false, nil
		}
		iter = p.iterator
	}
}

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

// formatTime prints t in UTC, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
