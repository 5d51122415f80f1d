package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkFailure asserts a result with no usable response and the message
// want (a prefix when want ends in "...").
func checkFailure(t *testing.T, res *Result, want string) {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("Err = nil (Outcome %v, status %d); want %q", res.Outcome, res.StatusCode, want)
	}
	if res.Outcome != Failure || res.StatusCode != 0 || res.Body != nil {
		t.Errorf("Outcome, StatusCode, Body = %v, %d, %q; want failure, 0, nil", res.Outcome, res.StatusCode, res.Body)
	}
	if prefix, ok := strings.CutSuffix(want, "..."); ok {
		if !strings.HasPrefix(res.Message(), prefix) {
			t.Errorf("Message() = %q, want it to start with %q", res.Message(), prefix)
		}
	} else if res.Message() != want {
		t.Errorf("Message() = %q, want %q", res.Message(), want)
	}
	if res.Err.Error() != res.Message() {
		t.Errorf("Err.Error() = %q, Message() = %q; want the same", res.Err, res.Message())
	}
}

func TestPostHangingServerTimesOut(t *testing.T) {
	t.Parallel()
	// Accepts, reads the request, never answers.
	base := rawServer(t, func(conn net.Conn) {
		if readRequest(t, conn) {
			_, _ = io.Copy(io.Discard, conn) // until the client gives up
		}
	})
	const timeout = 300 * time.Millisecond
	c := localClient(t, Config{Timeout: timeout})

	start := time.Now()
	res := c.Post(t.Context(), &Request{URL: base, Body: []byte(`{}`)})
	elapsed := time.Since(start)

	checkFailure(t, res, "no response within 300ms")
	if !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(Err, context.DeadlineExceeded) = false for %v", res.Err)
	}
	if elapsed < timeout || elapsed > timeout+time.Second {
		t.Errorf("returned after %v, want about %v", elapsed, timeout)
	}
}

func TestPostSlowHeadersTimeOut(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	})
	const timeout = 300 * time.Millisecond
	c := localClient(t, Config{Timeout: timeout})

	start := time.Now()
	res := c.Post(t.Context(), &Request{URL: srv.URL})

	checkFailure(t, res, "no response within 300ms")
	if !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(Err, context.DeadlineExceeded) = false for %v", res.Err)
	}
	if d := time.Since(start); d > timeout+time.Second {
		t.Errorf("returned after %v, want within the timeout + 1s", d)
	}
}

func TestPostCallerDeadlineBoundsAttempt(t *testing.T) {
	t.Parallel()
	base := rawServer(t, func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) })
	c := localClient(t, Config{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()

	start := time.Now()
	res := c.Post(ctx, &Request{URL: base})

	checkFailure(t, res, "no response within 300ms")
	if d := time.Since(start); d > 300*time.Millisecond+time.Second {
		t.Errorf("returned after %v, want within the caller's 300ms + 1s", d)
	}
}

func TestPostCallerCancels(t *testing.T) {
	t.Parallel()
	base := rawServer(t, func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) })
	c := localClient(t, Config{Timeout: time.Minute})

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := c.Post(ctx, &Request{URL: base})
	checkFailure(t, res, "attempt cancelled before a response arrived")
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("errors.Is(Err, context.Canceled) = false for %v", res.Err)
	}

	// Already cancelled: nothing is sent.
	res = c.Post(ctx, &Request{URL: base})
	checkFailure(t, res, "attempt cancelled before it started")
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("errors.Is(Err, context.Canceled) = false for %v", res.Err)
	}
}

func TestPostConnectionReset(t *testing.T) {
	t.Parallel()
	base := rawServer(t, func(conn net.Conn) {
		if readRequest(t, conn) {
			_ = conn.(*net.TCPConn).SetLinger(0) // Close sends RST
		}
	})
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: base, Body: []byte(`{}`)})

	checkFailure(t, res, "connection reset by the receiver")
	if !errors.Is(res.Err, syscall.ECONNRESET) {
		t.Errorf("errors.Is(Err, ECONNRESET) = false for %v", res.Err)
	}
}

func TestPostInvalidHTTP(t *testing.T) {
	t.Parallel()
	c := localClient(t, Config{})
	for _, tt := range []struct{ reply, want string }{
		{"HELLO\r\n\r\n", `invalid HTTP response: bad status line "HELLO"`},
		{"HELLO THERE\r\n\r\n", `invalid HTTP response: bad status code "THERE"`},
		{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", `invalid HTTP response: bad header: missing colon: "no colon here"`},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", "invalid HTTP response: connection closed in the middle of the headers"},
	} {
		base := rawServer(t, func(conn net.Conn) {
			if readRequest(t, conn) {
				_, _ = io.WriteString(conn, tt.reply)
			}
		})

		res := c.Post(t.Context(), &Request{URL: base})

		checkFailure(t, res, tt.want)
	}
}

func TestPostClosedWithoutResponse(t *testing.T) {
	t.Parallel()
	base := rawServer(t, func(conn net.Conn) { readRequest(t, conn) })
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: base})

	checkFailure(t, res, "connection closed by the receiver without a response")
	if !errors.Is(res.Err, io.EOF) {
		t.Errorf("errors.Is(Err, io.EOF) = false for %v", res.Err)
	}
}

func TestPostConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: "http://" + addr + "/hook"})

	checkFailure(t, res, "connection refused")
	if !errors.Is(res.Err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is(Err, ECONNREFUSED) = false for %v", res.Err)
	}
}

func TestPostDNSFailure(t *testing.T) {
	t.Parallel()
	dns := newDNSServer(t, nil) // knows no name
	c := localClient(t, Config{Timeout: 5 * time.Second, Resolver: dns.resolver()})

	res := c.Post(t.Context(), &Request{URL: "http://nowhere.test/hook"})

	checkFailure(t, res, "DNS lookup failed for nowhere.test: no such host")
	var dnsErr *net.DNSError
	if !errors.As(res.Err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("errors.As(Err, *net.DNSError) with IsNotFound = false for %v", res.Err)
	}
	// Config.Resolver did the lookup: the test server was asked.
	if dns.questions("nowhere.test") == 0 {
		t.Error("the local DNS server was not asked about nowhere.test")
	}
}

// tlsServer starts an HTTPS server on 127.0.0.1 with httptest's self-signed
// certificate, its handshake errors silenced. Its handler answers with the
// protocol the request came in.
func tlsServer(t *testing.T, http2 bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = http2
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestPostTLSUntrustedCertificate(t *testing.T) {
	t.Parallel()
	srv := tlsServer(t, false)
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: srv.URL})

	checkFailure(t, res, "TLS handshake failed: certificate signed by unknown authority")
	var verr *tls.CertificateVerificationError
	if !errors.As(res.Err, &verr) {
		t.Errorf("errors.As(Err, *tls.CertificateVerificationError) = false for %v", res.Err)
	}
}

func TestPostTLSPlainHTTPServer(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	c := localClient(t, Config{})

	res := c.Post(t.Context(), &Request{URL: strings.Replace(srv.URL, "http://", "https://", 1)})

	checkFailure(t, res, "TLS handshake failed: ...")
}

func TestPostTLSTrusted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		http2 bool
		proto string
	}{{false, "HTTP/1.1"}, {true, "HTTP/2.0"}} {
		srv := tlsServer(t, tt.http2)
		c := localClient(t, Config{})
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		c.transport.TLSClientConfig.RootCAs = pool

		res := c.Post(t.Context(), &Request{URL: srv.URL})

		if res.Err != nil || res.Outcome != Success || string(res.Body) != tt.proto {
			t.Errorf("server offers HTTP/2: %v; Outcome, Body, Err = %v, %q, %v; want success, %q",
				tt.http2, res.Outcome, res.Body, res.Err, tt.proto)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond:                      "300ms",
		299*time.Millisecond + 999*time.Microsecond: "300ms",
		time.Second:                "1s",
		1500 * time.Millisecond:    "1.5s",
		15 * time.Second:           "15s",
		time.Minute:                "1m",
		90 * time.Second:           "1m30s",
		10 * time.Minute:           "10m",
		time.Hour:                  "1h",
		time.Hour + 30*time.Minute: "1h30m",
		time.Hour + 5*time.Second:  "1h0m5s",
		500 * time.Microsecond:     "500µs",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%d) = %q, want %q", d, got, want)
		}
	}
}
