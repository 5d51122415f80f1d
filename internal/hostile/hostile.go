// Package hostile starts webhook receivers that misbehave, for the tests that check that hookd,
// as a library or as hookd serve, records one failed attempt with a readable error for each
// and keeps its memory bounded meanwhile.
package hostile

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// Receiver is one misbehaving receiver.
type Receiver struct {
	Name string // what it does, "1 GiB response"
	URL  string // where to deliver
	// WantError is a piece of the error an attempt to deliver to it records.
	WantError string
}

// Start starts the receivers, on 127.0.0.1 but for one whose name does not resolve; they stop
// when t ends. timeout is the sender's attempt timeout: it gives up on "headers trickled" then,
// well under the half minute that receiver takes.
func Start(t testing.TB, timeout time.Duration) []Receiver {
	t.Helper()
	tls := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the sender turns down, expected
	tls.StartTLS()
	t.Cleanup(tls.Close)
	return []Receiver{
		// Resets the connection in the middle of the request's body, before any answer. (A reset
		// after a 2xx status line counts as delivered: the status decides, see package delivery.)
		{"reset mid-body", raw(t, func(conn net.Conn) {
			_ = conn.(*net.TCPConn).SetLinger(0)
		}), "connection reset"},
		{"headers trickled, a byte a second", raw(t, func(conn net.Conn) {
			for _, c := range []byte("HTTP/1.1 200 OK\r\nX-Slow: yes\r\n\r\n") {
				if _, err := conn.Write([]byte{c}); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}), "no response within " + timeout.String()},
		{"1 GiB response", raw(t, func(conn net.Conn) {
			_, _ = io.WriteString(conn, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1073741824\r\n\r\n")
			chunk := make([]byte, 64<<10)
			for range (1 << 30) / len(chunk) {
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		}), "HTTP 500"},
		{"invalid HTTP", raw(t, func(conn net.Conn) {
			_, _ = io.WriteString(conn, "HELLO THERE\r\n\r\n")
		}), "invalid HTTP response"},
		{"TLS with an untrusted certificate", tls.URL + "/hook", "certificate"},
		{"a name that does not resolve", "http://hookd-no-such-host.invalid/hook", "no-such-host"},
	}
}

// raw starts a TCP server on 127.0.0.1 that reads the head of one request per connection and
// the first byte of its body, then does what serve says, and returns its URL.
func raw(t testing.TB, serve func(conn net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				_, _ = req.Body.Read(make([]byte, 1))
				serve(conn)
			})
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// CheckAttempts fails the test unless attempts hold one failed attempt for each receiver, by the
// id of the endpoint that delivers to it, each with a readable error (one short line holding the
// receiver's WantError), and logs each error.
func CheckAttempts(t testing.TB, receivers map[string]Receiver, attempts []hookd.Attempt) {
	t.Helper()
	got := map[string]int{}
	for _, a := range attempts {
		r := receivers[a.EndpointID]
		got[a.EndpointID]++
		switch {
		case a.Success:
			t.Errorf("%s: the attempt succeeded", r.Name)
		case a.Error == "" || !strings.Contains(a.Error, r.WantError):
			t.Errorf("%s: error %q, want a readable one with %q", r.Name, a.Error, r.WantError)
		case strings.Contains(a.Error, "\n") || len(a.Error) > 500:
			t.Errorf("%s: error not one short line: %q", r.Name, a.Error)
		}
		t.Logf("%-36s %s", r.Name+":", a.Error)
	}
	for id, r := range receivers {
		if got[id] != 1 {
			t.Errorf("%s: %d attempts recorded, want 1", r.Name, got[id])
		}
	}
}
