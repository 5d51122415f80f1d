package delivery

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

// Every attempt says which hookd sent it, as Svix's server does ("Svix-Webhooks/1.44.0"): the
// release, after the prefix "hookd/" that receivers match on.
func TestPostSendsReleaseUserAgent(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("User-Agent") })
	c := localClient(t, Config{})
	if res := c.Post(t.Context(), &Request{URL: srv.URL, Body: []byte(`{}`)}); res.Err != nil || res.Outcome != Success {
		t.Fatalf("Post: %v, %v", res.Outcome, res.Err)
	}
	ua := <-got
	want := "hookd/" + strings.TrimPrefix(buildinfo.Release, "v")
	if ua != want || !strings.HasPrefix(ua, "hookd/") {
		t.Fatalf("User-Agent = %q, want %q", ua, want)
	}
	if ua != DefaultUserAgent() {
		t.Fatalf("User-Agent = %q, DefaultUserAgent() = %q", ua, DefaultUserAgent())
	}
}
