// Package delivery makes one outgoing webhook HTTP attempt, and makes it
// safely: a long-lived client with every timeout set and keep-alive
// connections, one total deadline per attempt that covers the body read,
// redirects never followed, the response body read up to a cap and no
// further, and an SSRF guard that judges the address actually dialed.
//
// Every status is classified in one place, [Classify], into an [Outcome];
// every failure becomes a [Result] whose Message reads well in an attempt
// log. Nothing else in hookd opens a socket to a customer's server.
package delivery

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"
	"unicode/utf8"
)

// Transport limits that are not part of Config.
const (
	maxIdleConnsPerHost = 64
	maxIdleConns        = 1024
	idleConnTimeout     = 90 * time.Second
	tcpKeepAlive        = 30 * time.Second
	expectContinue      = time.Second
	maxHeaderBytes      = 64 << 10
	h2PingTimeout       = 15 * time.Second
	maxInitialBuffer    = 64 << 10
)

var (
	errNilClient  = errors.New("delivery: Post on a nil or zero Client; use New")
	errNilRequest = errors.New("delivery: Post with a nil Request")
)

// Client sends webhook attempts. It holds one long-lived *http.Client whose
// connections are kept alive and reused across attempts to the same host.
// Make one with [New] and share it: it is safe for concurrent use.
type Client struct {
	cfg       *Config
	http      *http.Client
	transport *http.Transport
	guard     *guard // nil when a proxy filters instead
}

// New returns a Client. A nil cfg means defaults; see [Config].
func New(cfg *Config) *Client {
	cfg = cfg.WithDefaults()
	c := &Client{cfg: cfg}

	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: tcpKeepAlive, Resolver: cfg.Resolver}
	if cfg.Proxy == nil {
		c.guard = newGuard(cfg.AllowSubnets)
		dialer.Control = c.guard.control
	}
	c.transport = &http.Transport{
		Proxy:                  nil, // never from the environment
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		ExpectContinueTimeout:  expectContinue,
		IdleConnTimeout:        idleConnTimeout,
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    maxIdleConnsPerHost,
		MaxConnsPerHost:        cfg.MaxConnsPerHost,
		MaxResponseHeaderBytes: maxHeaderBytes,
		DisableCompression:     true, // the body is kept as sent, and capped as sent
		ForceAttemptHTTP2:      true,
		HTTP2: &http.HTTP2Config{
			// Ping a silent HTTP/2 connection so that a dead one is dropped
			// instead of timing out every attempt that shares it.
			SendPingTimeout: cfg.Timeout,
			PingTimeout:     min(cfg.Timeout, h2PingTimeout),
		},
	}
	if cfg.Proxy != nil {
		c.transport.Proxy = http.ProxyURL(cfg.Proxy) // cfg is our own copy
	}
	c.http = &http.Client{
		Transport: c.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		// No Client.Timeout: each attempt's context bounds it, body read
		// included.
	}
	return c
}

// CloseIdleConnections closes the keep-alive connections not in use. Call it
// when the Client is no longer needed.
func (c *Client) CloseIdleConnections() {
	if c != nil && c.transport != nil {
		c.transport.CloseIdleConnections()
	}
}

// Post sends req as one attempt, within its timeout (req.Timeout, bounded by
// the configured one) and ctx, whichever ends first. It never returns nil and never panics: a refused
// URL, a refusal by the SSRF guard, a timeout and every transport failure
// come back as a Result with Outcome Failure and Err set.
func (c *Client) Post(ctx context.Context, req *Request) *Result {
	start := time.Now()
	res := &Result{Outcome: Failure}
	defer func() { res.Duration = time.Since(start) }()

	switch {
	case c == nil || c.http == nil:
		res.Err = errNilClient
		return res
	case req == nil:
		res.Err = errNilRequest
		return res
	}
	if err := ValidateURL(req.URL); err != nil {
		res.Err = err
		return res
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		res.Err = &transportError{msg: "attempt cancelled before it started", err: err}
		return res
	}
	timeout := c.cfg.Timeout
	if req.Timeout > 0 && req.Timeout < timeout {
		timeout = req.Timeout
	}
	limit := timeout
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(start) < limit {
		limit = deadline.Sub(start)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	trace := &attemptTrace{}
	ctx = httptrace.WithClientTrace(ctx, trace.clientTrace())

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		res.Err = &URLError{URL: req.URL, Reason: innerMessage(err)}
		return res
	}
	hreq.Header = c.requestHeader(req.Header)
	// net/http only reads a client request's headers, so they are, after Do, the headers as
	// they were sent.
	res.RequestHeader = hreq.Header
	resp, err := c.http.Do(hreq)
	if err != nil {
		res.Err = describe(ctx, err, trace, limit)
		return res
	}
	res.StatusCode = resp.StatusCode
	res.Header, res.HeaderOmitted = BoundHeader(resp.Header)
	res.Outcome = Classify(resp.StatusCode)
	res.RetryAfter, _ = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if res.Outcome == Redirect {
		if loc, err := resp.Location(); err == nil {
			res.Location = shorten(loc.String(), 300)
		}
	}
	res.Body = readCapped(resp, c.cfg.MaxResponseBody)
	return res
}

// requestHeader is a copy of h with its names in canonical form (the values of two names with
// one canonical form joined), Content-Type and User-Agent added when absent. The values share
// one array, each name's a full slice of it, so that appending to one never writes over the next.
func (c *Client) requestHeader(h http.Header) http.Header {
	total := 2
	for _, vs := range h {
		total += len(vs)
	}
	vals := make([]string, 0, total)
	out := make(http.Header, len(h)+2)
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if prev, ok := out[ck]; ok || len(vs) == 0 {
			out[ck] = append(prev, vs...)
			continue
		}
		i := len(vals)
		vals = append(vals, vs...)
		out[ck] = vals[i:len(vals):len(vals)]
	}
	if _, ok := out["Content-Type"]; !ok {
		vals = append(vals, "application/json")
		out["Content-Type"] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if _, ok := out["User-Agent"]; !ok {
		vals = append(vals, c.cfg.UserAgent)
		out["User-Agent"] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return out
}

// readCapped reads at most max bytes of the body and closes it. It reads one
// byte more than it keeps, so that a body of exactly max bytes is read to
// its end and its connection can be reused; a longer body is abandoned, not
// drained, and its connection closed. A read error ends the read: what
// arrived is kept.
func readCapped(resp *http.Response, max int64) []byte {
	defer resp.Body.Close()
	if resp.ContentLength == 0 {
		return nil // no body (204, 304, Content-Length: 0): http.NoBody, nothing to read or keep
	}
	limit := max
	if limit < math.MaxInt64 {
		limit++
	}
	// Start small whatever Content-Length claims; grow as bytes arrive.
	size := int64(512)
	if n := resp.ContentLength; n >= 0 {
		size = min(n+1, limit, maxInitialBuffer)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, _ = buf.ReadFrom(io.LimitReader(resp.Body, limit))
	b := buf.Bytes()
	if int64(len(b)) > max {
		b = b[:max]
	}
	if len(b) == 0 {
		return nil
	}
	return b
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
