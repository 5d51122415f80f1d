package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestPostSuccessCapturesBody(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"received":true}`)
	})
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: srv.URL + "/hook", Body: []byte(`{}`)})

	if res.Err != nil {
		t.Fatalf("Err = %v", res.Err)
	}
	if res.Outcome != Success || res.StatusCode != http.StatusOK {
		t.Errorf("Outcome, StatusCode = %v, %d; want success, 200", res.Outcome, res.StatusCode)
	}
	if string(res.Body) != `{"received":true}` {
		t.Errorf("Body = %q", res.Body)
	}
	if res.Message() != "" {
		t.Errorf("Message() = %q, want empty", res.Message())
	}
	if res.Duration <= 0 {
		t.Errorf("Duration = %v, want > 0", res.Duration)
	}
}

func TestPostSendsRequest(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, path string
		header       http.Header
		body         string
	}
	got := make(chan seen, 2)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(b)}
	})
	c := localClient(t, Config{UserAgent: "test-agent/2"})

	body := []byte(`{"type":"invoice.paid"}`)
	hdr := http.Header{"webhook-id": {"msg_1"}} // not canonical on purpose
	hdr.Set("Webhook-Signature", "v1,abc")
	res := c.Post(t.Context(), &Request{URL: srv.URL + "/in?x=1", Header: hdr, Body: body})
	if res.Err != nil || res.Outcome != Success {
		t.Fatalf("Post: %v, %v", res.Outcome, res.Err)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/in?x=1" || s.body != string(body) {
		t.Errorf("server saw %s %s %q", s.method, s.path, s.body)
	}
	for k, want := range map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "test-agent/2",
		"Webhook-Id":        "msg_1",
		"Webhook-Signature": "v1,abc",
		"Content-Length":    fmt.Sprint(len(body)),
	} {
		if g := s.header.Get(k); g != want {
			t.Errorf("header %s = %q, want %q", k, g, want)
		}
	}
	if g := s.header.Get("Accept-Encoding"); g != "" {
		t.Errorf("Accept-Encoding = %q, want none", g)
	}

	// A Content-Type and User-Agent of the caller's win.
	hdr = http.Header{"Content-Type": {"text/plain"}, "User-Agent": {"mine"}}
	res = c.Post(t.Context(), &Request{URL: srv.URL, Header: hdr, Body: []byte("hi")})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	s = <-got
	if s.header.Get("Content-Type") != "text/plain" || s.header.Get("User-Agent") != "mine" {
		t.Errorf("headers = %v", s.header)
	}
	if len(s.header.Values("Content-Type")) != 1 {
		t.Errorf("Content-Type sent %d times", len(s.header.Values("Content-Type")))
	}
}

func TestPostStatuses(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name        string
		status      int
		retryAfter  string
		want        Outcome
		wantMessage string
		wantRetry   [2]time.Duration // inclusive range
	}{
		{"503", 503, "", Failure, "HTTP 503", [2]time.Duration{}},
		{"503 with Retry-After", 503, "30", Failure, "HTTP 503", [2]time.Duration{30 * time.Second, 30 * time.Second}},
		{"410", 410, "", Gone, "HTTP 410", [2]time.Duration{}},
		{"429 seconds", 429, "120", Throttled, "HTTP 429", [2]time.Duration{2 * time.Minute, 2 * time.Minute}},
		{"429 date", 429, future, Throttled, "HTTP 429", [2]time.Duration{time.Hour - 5*time.Second, time.Hour}},
		{"502 seconds", 502, "7", Throttled, "HTTP 502", [2]time.Duration{7 * time.Second, 7 * time.Second}},
		{"502 date", 502, future, Throttled, "HTTP 502", [2]time.Duration{time.Hour - 5*time.Second, time.Hour}},
		{"504 garbage Retry-After", 504, "soon", Throttled, "HTTP 504", [2]time.Duration{}},
		{"500", 500, "", Failure, "HTTP 500", [2]time.Duration{}},
		{"404", 404, "", Failure, "HTTP 404", [2]time.Duration{}},
		{"204", 204, "", Success, "", [2]time.Duration{}},
	}
	c := localClient(t, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, "the body")
			})

			res := c.Post(t.Context(), &Request{URL: srv.URL, Body: []byte(`{}`)})

			if res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if res.Outcome != tt.want || res.StatusCode != tt.status {
				t.Errorf("Outcome, StatusCode = %v, %d; want %v, %d", res.Outcome, res.StatusCode, tt.want, tt.status)
			}
			if res.Message() != tt.wantMessage {
				t.Errorf("Message() = %q, want %q", res.Message(), tt.wantMessage)
			}
			if res.RetryAfter < tt.wantRetry[0] || res.RetryAfter > tt.wantRetry[1] {
				t.Errorf("RetryAfter = %v, want in %v", res.RetryAfter, tt.wantRetry)
			}
			if tt.status != 204 && string(res.Body) != "the body" {
				t.Errorf("Body = %q", res.Body)
			}
		})
	}
}

func TestPostNeverFollowsRedirects(t *testing.T) {
	t.Parallel()
	target, targetHits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	c := localClient(t, Config{})
	for _, status := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			origin, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/new", status)
			})

			res := c.Post(t.Context(), &Request{URL: origin.URL, Body: []byte(`{}`)})

			if res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if res.Outcome != Redirect || res.StatusCode != status {
				t.Errorf("Outcome, StatusCode = %v, %d; want redirect, %d", res.Outcome, res.StatusCode, status)
			}
			if res.Location != target.URL+"/new" {
				t.Errorf("Location = %q, want %q", res.Location, target.URL+"/new")
			}
			want := fmt.Sprintf("redirect to %s/new not followed (HTTP %d)", target.URL, status)
			if res.Message() != want {
				t.Errorf("Message() = %q, want %q", res.Message(), want)
			}
		})
	}
	t.Cleanup(func() {
		if n := targetHits.n.Load(); n != 0 {
			t.Errorf("the redirect target was hit %d times", n)
		}
	})
}

func TestPostRedirectMessageResolvesRelativeLocation(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hook" {
			return
		}
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
	})
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: srv.URL + "/hook"})

	if res.Location != srv.URL+"/elsewhere" {
		t.Errorf("Location = %q, want %q", res.Location, srv.URL+"/elsewhere")
	}
	if want := "redirect to " + srv.URL + "/elsewhere not followed (HTTP 302)"; res.Message() != want {
		t.Errorf("Message() = %q, want %q", res.Message(), want)
	}
	if n := hits.n.Load(); n != 1 {
		t.Errorf("server hit %d times, want 1 (the redirect not followed)", n)
	}
}

func TestPostEndlessBodyStopsAtCap(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
	const timeout = 10 * time.Second
	c := localClient(t, Config{Timeout: timeout})

	start := time.Now()
	res := c.Post(t.Context(), &Request{URL: srv.URL})

	if res.Err != nil || res.Outcome != Success {
		t.Fatalf("Outcome, Err = %v, %v", res.Outcome, res.Err)
	}
	if len(res.Body) != DefaultMaxResponseBody {
		t.Errorf("len(Body) = %d, want %d", len(res.Body), DefaultMaxResponseBody)
	}
	// Not a speed test: the read must have stopped at the cap rather than
	// run on until the attempt's timeout.
	if d := time.Since(start); d >= timeout {
		t.Errorf("returned after %v, not before the %v timeout", d, timeout)
	}
}

func TestPostLargeBodyTruncated(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	big := make([]byte, size)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		_, _ = w.Write(big)
	})
	c := localClient(t, Config{MaxResponseBody: 1000})

	res := c.Post(t.Context(), &Request{URL: srv.URL})

	if res.Err != nil || res.Outcome != Success {
		t.Fatalf("Outcome, Err = %v, %v", res.Outcome, res.Err)
	}
	if !bytes.Equal(res.Body, big[:1000]) {
		t.Errorf("Body = %d bytes %.20q..., want the first 1000 bytes", len(res.Body), res.Body)
	}
}

func TestPostHugeCapReadsWholeBody(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "all of it")
	})
	c := localClient(t, Config{MaxResponseBody: math.MaxInt64})

	res := c.Post(t.Context(), &Request{URL: srv.URL})

	if res.Err != nil || string(res.Body) != "all of it" {
		t.Errorf("Body, Err = %q, %v", res.Body, res.Err)
	}
}

func TestPostSlowBodyKeepsStatusAndPartialBody(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := io.WriteString(w, "a"); err != nil {
				return
			}
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	const timeout = 300 * time.Millisecond
	c := localClient(t, Config{Timeout: timeout})

	start := time.Now()
	res := c.Post(t.Context(), &Request{URL: srv.URL})

	if d := time.Since(start); d > timeout+time.Second {
		t.Errorf("returned after %v, want within the timeout + 1s", d)
	}
	if res.Err != nil || res.Outcome != Success || res.StatusCode != 200 {
		t.Fatalf("Outcome, StatusCode, Err = %v, %d, %v; want success, 200, nil", res.Outcome, res.StatusCode, res.Err)
	}
	if len(res.Body) == 0 || len(res.Body) >= DefaultMaxResponseBody || strings.Trim(string(res.Body), "a") != "" {
		t.Errorf("Body = %q, want the part that arrived", res.Body)
	}
}

func TestPostReusesConnections(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	}))
	conns := countConns(srv)
	srv.Start()
	t.Cleanup(srv.Close)
	c := localClient(t, Config{})

	for i := range 5 {
		res := c.Post(t.Context(), &Request{URL: srv.URL, Body: []byte(`{"n":1}`)})
		if res.Err != nil || res.Outcome != Success {
			t.Fatalf("attempt %d: %v, %v", i, res.Outcome, res.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections for 5 attempts, want 1", n)
	}
}

// A chunked body of exactly the cap is still read to its end, so that its
// connection can be reused.
func TestPostReusesConnectionAfterBodyOfExactlyTheCap(t *testing.T) {
	t.Parallel()
	const capBytes = 16
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Chunked (no Content-Length), and the final empty chunk comes
		// later, in a packet of its own: only a reader that reads past the
		// cap sees the end of the body.
		rc := http.NewResponseController(w)
		_, _ = io.WriteString(w, strings.Repeat("b", capBytes))
		_ = rc.Flush()
		time.Sleep(50 * time.Millisecond)
	}))
	conns := countConns(srv)
	srv.Start()
	t.Cleanup(srv.Close)
	c := localClient(t, Config{MaxResponseBody: capBytes})

	for i := range 3 {
		res := c.Post(t.Context(), &Request{URL: srv.URL})
		if res.Err != nil || len(res.Body) != capBytes {
			t.Fatalf("attempt %d: body %q, err %v", i, res.Body, res.Err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections for 3 attempts, want 1", n)
	}
}

func TestPostMaxConnsPerHost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
	}))
	conns := countConns(srv)
	srv.Start()
	t.Cleanup(srv.Close)
	c := localClient(t, Config{MaxConnsPerHost: 1})

	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if res := c.Post(t.Context(), &Request{URL: srv.URL}); res.Err != nil {
				t.Errorf("Post: %v", res.Err)
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections with MaxConnsPerHost 1", n)
	}
}

func TestPostConcurrent(t *testing.T) {
	t.Parallel()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	})
	c := localClient(t, Config{})

	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 5 {
				body := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				res := c.Post(t.Context(), &Request{URL: srv.URL, Body: []byte(body)})
				if res.Err != nil || string(res.Body) != body {
					t.Errorf("Post %s: body %q, err %v", body, res.Body, res.Err)
				}
			}
		})
	}
	wg.Wait()
	if n := hits.n.Load(); n != 80 {
		t.Errorf("server hit %d times, want 80", n)
	}
}

func TestPostThroughProxy(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 1)
	proxy, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.String()
		_, _ = io.WriteString(w, "via proxy")
	})
	proxyURL, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	// No AllowSubnets: the proxy, on 127.0.0.1, is reachable only because
	// a proxy turns the guard off. The private target is never dialed: the
	// test proxy answers itself.
	c := newClient(t, &Config{Proxy: proxyURL})

	res := c.Post(t.Context(), &Request{URL: "http://10.0.0.5:9000/hook"})

	if res.Err != nil || string(res.Body) != "via proxy" {
		t.Fatalf("Body, Err = %q, %v", res.Body, res.Err)
	}
	if got := <-seen; got != "http://10.0.0.5:9000/hook" {
		t.Errorf("proxy asked for %q", got)
	}
	if c.guard != nil {
		t.Error("guard is on with a proxy configured")
	}
}

func TestPostProxyRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	ln.Close()
	c := newClient(t, &Config{Proxy: proxy})

	res := c.Post(t.Context(), &Request{URL: "http://10.0.0.5:9000/hook"})

	checkFailure(t, res, "proxy connection failed: connection refused")
	if !errors.Is(res.Err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(Err, ECONNREFUSED) = false for %v", res.Err)
	}
}

func TestNewIgnoresEnvironmentProxy(t *testing.T) {
	t.Parallel()
	if p := New(nil).transport.Proxy; p != nil {
		t.Error("transport has a Proxy function; want none without Config.Proxy")
	}
}

func TestNewSetsEveryTimeout(t *testing.T) {
	t.Parallel()
	c := New(&Config{Timeout: 7 * time.Second, MaxConnsPerHost: 3})
	tr := c.transport
	for name, d := range map[string]time.Duration{
		"TLSHandshakeTimeout":   tr.TLSHandshakeTimeout,
		"ResponseHeaderTimeout": tr.ResponseHeaderTimeout,
		"IdleConnTimeout":       tr.IdleConnTimeout,
		"ExpectContinueTimeout": tr.ExpectContinueTimeout,
	} {
		if d <= 0 || d > 7*time.Second && name != "IdleConnTimeout" {
			t.Errorf("%s = %v, want set and at most the attempt timeout", name, d)
		}
	}
	if c.http.Timeout != 0 {
		t.Errorf("http.Client.Timeout = %v; the attempt's context bounds it instead", c.http.Timeout)
	}
	if c.http.CheckRedirect == nil {
		t.Error("CheckRedirect is nil: redirects would be followed")
	}
	if tr.MaxConnsPerHost != 3 || tr.MaxIdleConnsPerHost != 64 {
		t.Errorf("MaxConnsPerHost, MaxIdleConnsPerHost = %d, %d; want 3, 64", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost)
	}
}

func TestPostRefusesBadInput(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	ctx := context.Background()

	res := c.Post(ctx, &Request{URL: "ftp://example.com/x"})
	var ue *URLError
	if !errors.As(res.Err, &ue) || !errors.Is(res.Err, ErrInvalidURL) || res.Outcome != Failure {
		t.Errorf("bad URL: Outcome, Err = %v, %v; want failure, *URLError", res.Outcome, res.Err)
	}
	if want := `invalid endpoint URL "ftp://example.com/x": scheme must be http or https`; res.Message() != want {
		t.Errorf("Message() = %q, want %q", res.Message(), want)
	}

	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	res = localClient(t, Config{}).Post(ctx, &Request{URL: srv.URL, Header: http.Header{"X-Bad": {"a\nb"}}})
	if res.Err == nil || res.Outcome != Failure || !strings.HasPrefix(res.Message(), "request failed: ") {
		t.Errorf("bad header: Outcome, Err = %v, %v; want failure, request failed", res.Outcome, res.Err)
	}
	if n := hits.n.Load(); n != 0 {
		t.Errorf("bad header: server hit %d times, want 0", n)
	}

	if res := c.Post(ctx, nil); res == nil || res.Err == nil || res.Outcome != Failure {
		t.Errorf("nil request: %+v", res)
	}
	var zero *Client
	if res := zero.Post(ctx, &Request{URL: "http://example.com"}); res == nil || res.Err == nil {
		t.Errorf("nil client: %+v", res)
	}
	zero.CloseIdleConnections()
	if res := (&Client{}).Post(ctx, &Request{URL: "http://example.com"}); res == nil || res.Err == nil {
		t.Errorf("zero client: %+v", res)
	}
}
