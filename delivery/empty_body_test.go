package delivery

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A response with no body (204, or Content-Length: 0) gives a nil Body, and its connection
// serves the next attempt.
func TestEmptyResponseBody(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNoContent, http.StatusOK} {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(status)
		}))
		conns := countConns(srv)
		srv.Start()
		t.Cleanup(srv.Close)
		c := localClient(t, Config{})
		for range 3 {
			res := c.Post(context.Background(), &Request{URL: srv.URL, Body: []byte(`{}`)})
			if res.Err != nil || res.StatusCode != status || res.Body != nil {
				t.Fatalf("HTTP %d: Err %v, status %d, Body %q; want no error, %d, nil", status, res.Err, res.StatusCode, res.Body, status)
			}
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("HTTP %d: 3 attempts opened %d connections; want 1", status, n)
		}
	}
}
