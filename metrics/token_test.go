package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/metrics"
)

// With a Token, a scrape without it (or with another) gets 401 and no application or endpoint id.
func TestTokenGuardsTheScrape(t *testing.T) {
	t.Parallel()
	const token = "metrics_token_0123456789abcdef0123456789"
	b := backlog{pending: []hookd.PendingEndpoint{{EndpointID: "ep_secretive", AppID: "app_secretive", Pending: 2, Oldest: now}}}
	m := metrics.New(b, &metrics.Config{Now: func() time.Time { return now }, Token: token})
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"another token", "Bearer " + token + "x", http.StatusUnauthorized},
		{"not bearer", "Basic " + token, http.StatusUnauthorized},
		{"a prefix of it", "Bearer " + token[:10], http.StatusUnauthorized},
		{"the token", "Bearer " + token, http.StatusOK},
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.want)
		}
		leaks := strings.Contains(rec.Body.String(), "app_secretive")
		if tc.want == http.StatusOK && !leaks {
			t.Errorf("%s: the backlog is missing:\n%s", tc.name, rec.Body)
		}
		if tc.want != http.StatusOK && leaks {
			t.Errorf("%s: refused, yet the body names the application:\n%s", tc.name, rec.Body)
		}
		if tc.want == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, rec.Header().Get("WWW-Authenticate"))
		}
	}
}

// Without a Token every scrape is answered, as before.
func TestNoTokenAnswersEveryScrape(t *testing.T) {
	t.Parallel()
	m := metrics.New(backlog{}, nil)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
}
