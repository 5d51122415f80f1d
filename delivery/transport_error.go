package delivery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// transportError is Result.Err when no usable response arrived. Its text is
// the human message; it wraps what net/http returned.
type transportError struct {
	msg     string
	err     error
	timeout bool // also wraps context.DeadlineExceeded
}

func (e *transportError) Error() string { return e.msg }

func (e *transportError) Unwrap() []error {
	if e.timeout {
		return []error{context.DeadlineExceeded, e.err}
	}
	return []error{e.err}
}

// attemptTrace records what net/http does not say in its error: whether the
// TLS handshake failed, and whether any byte of a response arrived.
type attemptTrace struct {
	mu        sync.Mutex
	tlsErr    error
	firstByte bool
}

func (t *attemptTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				t.mu.Lock()
				t.tlsErr = err
				t.mu.Unlock()
			}
		},
		GotFirstResponseByte: func() {
			t.mu.Lock()
			t.firstByte = true
			t.mu.Unlock()
		},
	}
}

// describe turns the error of http.Client.Do into a transportError with a
// message for a human. ctx is the attempt's context; limit is the time the
// attempt had (the configured timeout, or less when the caller's deadline
// came first).
func describe(ctx context.Context, err error, tr *attemptTrace, limit time.Duration) *transportError {
	tr.mu.Lock()
	tlsErr, firstByte := tr.tlsErr, tr.firstByte
	tr.mu.Unlock()

	e := &transportError{err: err}
	var (
		blocked *blockedError
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &blocked):
		e.msg = blocked.Error()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.msg, e.timeout = "no response within "+formatDuration(limit), true
	case ctx.Err() != nil:
		e.msg = "attempt cancelled before a response arrived"
	case errors.As(err, &opErr) && opErr.Op == "proxyconnect":
		e.msg = "proxy connection failed: " + describe(ctx, opErr.Err, &attemptTrace{}, limit).msg
	case tlsErr != nil:
		e.msg = "TLS handshake failed: " + tlsReason(tlsErr)
	case isTLSError(err):
		e.msg = "TLS handshake failed: " + tlsReason(err)
	case errors.As(err, &dnsErr):
		e.msg = "DNS lookup failed for " + dnsErr.Name
		if dnsErr.Err != "" {
			e.msg += ": " + dnsErr.Err // "no such host", "server misbehaving"
		}
	case errors.Is(err, syscall.ECONNREFUSED):
		e.msg = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		e.msg = "connection reset by the receiver"
	case errors.Is(err, syscall.EPIPE):
		e.msg = "connection closed by the receiver while the request was sent"
	case errors.As(err, &netErr) && netErr.Timeout():
		e.msg, e.timeout = "no response within "+formatDuration(limit), true
	case firstByte && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		e.msg = "invalid HTTP response: connection closed in the middle of the headers"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e.msg = "connection closed by the receiver without a response"
	case firstByte:
		e.msg = "invalid HTTP response: " + protocolReason(err)
	case errors.As(err, &opErr):
		e.msg = "connection failed: " + innerMessage(opErr.Err)
	default:
		e.msg = "request failed: " + innerMessage(err)
	}
	return e
}

// isTLSError catches handshake failures the trace did not see (a dial
// started for another attempt, whose connection this one took over).
func isTLSError(err error) bool {
	var (
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

// tlsReason shortens a handshake error to its reason:
// "certificate signed by unknown authority".
func tlsReason(err error) string {
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) && verify.Err != nil {
		err = verify.Err
	}
	msg := innerMessage(err)
	msg = strings.TrimPrefix(msg, "tls: ")
	msg = strings.TrimPrefix(msg, "x509: ")
	return msg
}

// protocolReason rewords net/http's parse errors for a response that is not
// HTTP.
func protocolReason(err error) string {
	// net/http's parse errors do not wrap; the last error in the chain is
	// the parse error without "transport connection broken" decorations.
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	msg := innerMessage(err)
	for _, r := range [...]struct{ from, to string }{
		{"malformed HTTP response", "bad status line"},
		{"malformed HTTP status code", "bad status code"},
		{"malformed HTTP version", "bad HTTP version"},
		{"malformed MIME header line", "bad header line"},
		{"malformed MIME header", "bad header"},
	} {
		if rest, ok := strings.CutPrefix(msg, r.from); ok {
			msg = r.to + rest
			break
		}
	}
	return msg
}

// innerMessage is the text of err without net/http's *url.Error decoration
// (`Post "https://...": `) and "net/http: " prefixes, at most 300 bytes.
func innerMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	return shorten(strings.TrimPrefix(err.Error(), "net/http: "), 300)
}

// formatDuration writes d like time.Duration.String, rounded to the
// millisecond and without trailing zero units: 300ms, 1s, 1.5s, 2m, 1h30m.
func formatDuration(d time.Duration) string {
	if d >= time.Millisecond {
		d = d.Round(time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
