package delivery

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
)

// loopback lets test clients reach the test servers on 127.0.0.1.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// newClient returns a Client for cfg whose idle connections close with the
// test.
func newClient(t testing.TB, cfg *Config) *Client {
	t.Helper()
	c := New(cfg)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// localClient returns a Client allowed to reach 127.0.0.0/8, with cfg's
// other settings.
func localClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	cfg.AllowSubnets = loopback
	return newClient(t, &cfg)
}

// counter is an http.Handler wrapper that counts requests.
type counter struct {
	n    atomic.Int64
	next http.Handler
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.next.ServeHTTP(w, r)
}

// serve starts an httptest server on 127.0.0.1 running h, counting requests.
func serve(t testing.TB, h http.HandlerFunc) (*httptest.Server, *counter) {
	t.Helper()
	c := &counter{next: h}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return srv, c
}

// countConns makes srv count the connections it accepts. Call it before
// srv starts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// rawServer listens on 127.0.0.1 and runs handle for each connection in its
// own goroutine. It returns the base URL. The listener and every connection
// close when the test ends, and the handlers are waited for.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				handle(conn)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// readRequest reads one whole HTTP request, body included, from conn, so
// that closing conn afterwards sends no reset by accident.
func readRequest(t *testing.T, conn net.Conn) bool {
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil {
		t.Errorf("server: read request: %v", err)
		return false
	}
	_, err = io.Copy(io.Discard, req.Body)
	if err != nil {
		t.Errorf("server: read body: %v", err)
		return false
	}
	return true
}
