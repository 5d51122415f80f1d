package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// portalLinkSetup is authSetup with the API built on publicURL ("" for none).
func portalLinkSetup(t *testing.T, publicURL string) *bundle {
	t.Helper()
	b := authSetup(t)
	ta, _, err := NewTokenAuth(b.ctx, b.store, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := New(b.client, &Config{Auth: ta, Logger: b.log.Logger(), PublicURL: publicURL})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	b.srv = srv
	if _, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"}); err != nil {
		t.Fatal(err)
	}
	return b
}

// portalLink asks app-portal-access for acme's link, with the Host header host ("" for the
// server's own).
func (b *bundle) portalLink(t *testing.T, host string) *url.URL {
	t.Helper()
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.srv.URL+"/api/v1/auth/app-portal-access/acme", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.Header.Set("X-Forwarded-Host", "evil.example")
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out accessOut
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("app-portal-access: %d, %v", resp.StatusCode, err)
	}
	u, err := url.Parse(out.URL)
	if err != nil || u.Path != "/portal" || u.Query().Get("token") != out.Token {
		t.Fatalf("app-portal-access url %q, token %q", out.URL, out.Token)
	}
	return u
}

// A request's Host header (or X-Forwarded-*) does not choose where the portal link leads: without
// a public URL, the link is on the listener's address.
func TestPortalLinkIgnoresHostHeader(t *testing.T) {
	t.Parallel()
	b := portalLinkSetup(t, "")
	own, _ := url.Parse(b.srv.URL)
	for _, host := range []string{"", "evil.example", "evil.example:443"} {
		u := b.portalLink(t, host)
		if u.Scheme != "http" || u.Host != own.Host {
			t.Errorf("Host %q: the link is on %s://%s; want http://%s", host, u.Scheme, u.Host, own.Host)
		}
	}
}

// With a public URL, the link is built on it whatever the request says.
func TestPortalLinkOnPublicURL(t *testing.T) {
	t.Parallel()
	b := portalLinkSetup(t, "https://Hooks.Example.com/")
	for _, host := range []string{"", "evil.example"} {
		u := b.portalLink(t, host)
		if u.Scheme != "https" || u.Host != "hooks.example.com" {
			t.Errorf("Host %q: the link is on %s://%s; want https://hooks.example.com", host, u.Scheme, u.Host)
		}
	}
}

func TestParsePublicURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://hooks.example.com":       "https://hooks.example.com",
		"https://hooks.example.com/":      "https://hooks.example.com",
		"http://127.0.0.1:8071":           "http://127.0.0.1:8071",
		" https://HOOKS.example.com:8443": "https://hooks.example.com:8443",
	} {
		u, err := ParsePublicURL(in)
		if err != nil || u.String() != want {
			t.Errorf("ParsePublicURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, in := range []string{"", "hooks.example.com", "ftp://hooks.example.com", "https://", "https://:443",
		"https://hooks.example.com/hookd", "https://u:p@hooks.example.com", "https://hooks.example.com?x=1",
		"https://hooks.example.com#x", "javascript:alert(1)"} {
		if u, err := ParsePublicURL(in); err == nil {
			t.Errorf("ParsePublicURL(%q) = %v; want an error", in, u)
		}
	}
	if _, err := New(nil, &Config{Auth: staticAuth{}, PublicURL: "hooks.example.com"}); err == nil || errors.Is(err, errMissingAuth) {
		t.Errorf("New with a PublicURL without a scheme: %v; want the PublicURL's error", err)
	}
}
