package delivery

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchReceiver is a local receiver that reads the body and answers 200.
func benchReceiver(b *testing.B) *httptest.Server {
	b.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv
}

var benchBody = bytes.Repeat([]byte("x"), 1024)

// postBare is what a plain client does for one webhook: POST, read the
// body, close it.
func postBare(b *testing.B, c *http.Client, url string) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(benchBody))
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func BenchmarkPost(b *testing.B) {
	srv := benchReceiver(b)
	c := localClient(b, Config{})
	req := &Request{URL: srv.URL, Body: benchBody}
	b.ReportAllocs()
	for b.Loop() {
		if res := c.Post(b.Context(), req); res.Outcome != Success {
			b.Fatal(res.Message())
		}
	}
}

func BenchmarkBareHTTPClient(b *testing.B) {
	srv := benchReceiver(b)
	c := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		postBare(b, c, srv.URL)
	}
}

func BenchmarkPostParallel(b *testing.B) {
	srv := benchReceiver(b)
	c := localClient(b, Config{})
	req := &Request{URL: srv.URL, Body: benchBody}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := c.Post(b.Context(), req); res.Outcome != Success {
				b.Error(res.Message())
				return
			}
		}
	})
}

func BenchmarkBareHTTPClientParallel(b *testing.B) {
	srv := benchReceiver(b)
	c := &http.Client{}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(srv.URL, "application/json", bytes.NewReader(benchBody))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
