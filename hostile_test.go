package hookd_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// rawReceiver is a TCP server on 127.0.0.1 that reads one request per connection and then does
// what serve says.
func rawReceiver(t *testing.T, serve func(conn net.Conn)) string {
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
				br := bufio.NewReader(conn)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = req.Body.Read(make([]byte, 1)) // the body's first byte, no more
				serve(conn)
			})
		}
	}()
	return "http://" + ln.Addr().String()
}

// Hostile receivers, all at once: each delivery to one is one failed attempt with a readable
// error, and the process's heap stays bounded while a receiver answers 1 GiB.
func TestHostileReceivers(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Delivery.Timeout = 2 * time.Second
	cfg.RetrySchedule = []time.Duration{time.Hour} // one attempt each, within the test
	b := setup(t, cfg)

	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(tls.Close)
	receivers := map[string]struct {
		url  string
		want string // in the attempt's error
	}{
		// The receiver resets the connection in the middle of the request's body, before any answer.
		// (A reset after a 2xx status line counts as delivered: the status decides, see the delivery
		// package.)
		"reset mid-body": {rawReceiver(t, func(conn net.Conn) {
			_ = conn.(*net.TCPConn).SetLinger(0)
		}), "connection reset"},
		"headers trickled, a byte a second": {rawReceiver(t, func(conn net.Conn) {
			for _, c := range []byte("HTTP/1.1 200 OK\r\nX-Slow: yes\r\n\r\n") {
				if _, err := conn.Write([]byte{c}); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}), "no response within 2s"},
		"1 GiB response": {rawReceiver(t, func(conn net.Conn) {
			_, _ = io.WriteString(conn, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 1073741824\r\n\r\n")
			chunk := make([]byte, 64<<10)
			for range (1 << 30) / len(chunk) {
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		}), "HTTP 500"},
		"invalid HTTP": {rawReceiver(t, func(conn net.Conn) {
			_, _ = io.WriteString(conn, "HELLO THERE\r\n\r\n")
		}), "invalid HTTP response"},
		"TLS with an untrusted certificate": {tls.URL, "certificate"},
		"a name that does not resolve":      {"http://hookd-no-such-host.invalid/hook", "no-such-host"},
	}
	eps := map[string]string{} // endpoint id -> case
	for name, r := range receivers {
		ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: r.url + "/hook", Description: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		eps[ep.ID] = name
	}

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	m := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	deadline := time.Now().Add(30 * time.Second)
	var atts []hookd.Attempt
	for time.Now().Before(deadline) {
		p, err := b.client.ListAttempts(b.ctx, b.app.ID, hookd.AttemptFilter{MessageID: m.Message.ID})
		if err != nil {
			t.Fatal(err)
		}
		if atts = p.Data; len(atts) >= len(eps) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-sampled
	got := map[string]int{}
	for _, a := range atts {
		name := eps[a.EndpointID]
		got[name]++
		want := receivers[name].want
		switch {
		case a.Success:
			t.Errorf("%s: the attempt succeeded", name)
		case a.Error == "" || !strings.Contains(a.Error, want):
			t.Errorf("%s: error %q, want a readable one with %q", name, a.Error, want)
		case strings.Contains(a.Error, "\n") || len(a.Error) > 500:
			t.Errorf("%s: error not one short line: %q", name, a.Error)
		}
		t.Logf("%-36s %s", name+":", a.Error)
	}
	for name := range receivers {
		if got[name] != 1 {
			t.Errorf("%s: %d attempts recorded, want 1", name, got[name])
		}
	}
	const bound = 256 << 20
	t.Logf("peak heap in use while the receivers answered: %d MiB", peak.Load()>>20)
	if peak.Load() > bound {
		t.Errorf("peak heap in use %d MiB, over %d MiB: a response body was not capped", peak.Load()>>20, bound>>20)
	}
}
