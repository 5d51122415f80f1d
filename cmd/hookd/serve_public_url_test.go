package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// portalLinkFrom asks serve at base for acme's portal link, with the Host header host ("" for
// base's own).
func portalLinkFrom(t *testing.T, base, host string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/auth/app-portal-access/acme", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("app-portal-access: %d, %v", resp.StatusCode, err)
	}
	return out.URL
}

// --public-url makes the portal links, the forms' origin and the cookies' Secure; without it a
// link is on the listener's address whatever the Host header says (it once followed the Host
// header, so a request with Host: evil.example got a link to evil.example).
func TestServePublicURL(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--workers", "1")
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	for _, host := range []string{"", "evil.example"} {
		if link := portalLinkFrom(t, s.url, host); !strings.HasPrefix(link, s.url+"/portal?token=") {
			t.Errorf("Host %q: portal link %q; want it on %s", host, link, s.url)
		}
	}

	p := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--workers", "1",
		"--public-url", "https://hooks.example.test", "--portal-frame-ancestors", "https://app.example.test")
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	link := portalLinkFrom(t, p.url, "evil.example")
	if !strings.HasPrefix(link, "https://hooks.example.test/portal?token=") {
		t.Fatalf("portal link %q; want it on https://hooks.example.test", link)
	}
	u, _ := url.Parse(link)
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(p.url + "/portal?" + u.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "hookd_portal" {
			ck = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.Secure || ck.SameSite != http.SameSiteNoneMode || !ck.Partitioned {
		t.Errorf("the link: %d, cookie %v; want a Secure, SameSite=None, Partitioned cookie", resp.StatusCode, ck)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors https://app.example.test") {
		t.Errorf("the portal's CSP %q", csp)
	}
	req, _ := http.NewRequest(http.MethodPost, p.url+"/ui/login", strings.NewReader(url.Values{"token": {testAdminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.url)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-in from the listener's origin, not the public URL's: %d; want 403", resp.StatusCode)
	}
}

func TestServePublicURLBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--public-url", "hooks.example.com"}, `--public-url "hooks.example.com": use the http(s) URL the server is reached at`},
		{[]string{"--public-url", "https://hooks.example.com/hookd"}, `--public-url "https://hooks.example.com/hookd"`},
		{[]string{"--portal-frame-ancestors", "*"}, `--portal-frame-ancestors "*": use 'none', or origins such as https://app.example.com`},
		{[]string{"--portal-frame-ancestors", "https://a.example; script-src *"}, `--portal-frame-ancestors`},
	} {
		r := run(t, "", append([]string{"serve"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "hint: ") {
			t.Errorf("serve %q: exit %d, stderr %q; want exit 2 and %q with a hint", tc.args, r.code, r.stderr, tc.want)
		}
	}
	c, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		v, ok := map[string]string{"HOOKD_PUBLIC_URL": "https://Hooks.example.com/", "HOOKD_PORTAL_FRAME_ANCESTORS": "https://a.example, https://b.example"}[k]
		return v, ok
	})
	if err != nil || c.publicURL != "https://hooks.example.com" || strings.Join(c.frameAncestors, " ") != "https://a.example https://b.example" {
		t.Errorf("from the environment: %+v, %v", c, err)
	}
}
