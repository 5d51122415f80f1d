package ui_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/ui"
)

// send makes a request with c, with the header's pairs, and returns the response, its body read.
func send(t *testing.T, c *http.Client, method, u string, form url.Values, header ...string) (*http.Response, string) {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

// cookieOf is the cookie named name that resp sets, or nil.
func cookieOf(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// withCookie is a client without a jar or redirects that sends only the cookie name=value: what a
// browser that kept the cookie (or a thief of it) sends.
func withCookie(t *testing.T, s *site, name, value string) func(method, path string, form url.Values, header ...string) (*http.Response, string) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: s.srv.Client().Transport}
	return func(method, path string, form url.Values, header ...string) (*http.Response, string) {
		t.Helper()
		return send(t, c, method, s.srv.URL+path, form, append(header, "Cookie", name+"="+value)...)
	}
}

// The dashboard's cookie holds a session id, not the admin token, and after sign-out that cookie
// opens nothing (it once held the token itself, which kept working after sign-out).
func TestDashboardSignOutEndsSession(t *testing.T) {
	s := newSite(t, false)
	c := browser(t)
	resp, _ := send(t, c, http.MethodPost, s.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Origin", s.srv.URL)
	ck := cookieOf(resp, "hookd_ui")
	if resp.StatusCode != http.StatusSeeOther || ck == nil {
		t.Fatalf("sign in: %d, cookie %v", resp.StatusCode, ck)
	}
	if strings.Contains(ck.Value, adminToken) || ck.Value == "" {
		t.Fatalf("the dashboard's cookie holds the admin token")
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure || ck.MaxAge != int((12*time.Hour).Seconds()) {
		t.Errorf("cookie %+v; want HttpOnly, SameSite=Strict, not Secure over plain HTTP, 12 h", ck)
	}
	kept := withCookie(t, s, "hookd_ui", ck.Value)
	if resp, body := kept(http.MethodGet, "/ui/", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Acme") {
		t.Fatalf("/ui/ with the session's cookie: %d", resp.StatusCode)
	}
	// A sign-out from another site, or from nowhere, does not sign out.
	for _, h := range [][]string{{"Origin", "https://evil.example"}, {"Referer", "https://evil.example/x"}, {}} {
		if resp, _ := kept(http.MethodPost, "/ui/logout", nil, h...); resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-out with %q: %d; want 403", h, resp.StatusCode)
		}
	}
	if resp, _ := kept(http.MethodGet, "/ui/", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("/ui/ after a refused sign-out: %d; want 200", resp.StatusCode)
	}
	resp, _ = kept(http.MethodPost, "/ui/logout", nil, "Origin", s.srv.URL)
	if gone := cookieOf(resp, "hookd_ui"); resp.StatusCode != http.StatusSeeOther || gone == nil || gone.MaxAge >= 0 {
		t.Fatalf("sign-out: %d, cookie %v", resp.StatusCode, gone)
	}
	if resp, _ := kept(http.MethodGet, "/ui/", nil); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/login") {
		t.Errorf("/ui/ with the cookie kept after sign-out: %d → %q; want the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Nor does the admin token itself open a page as a cookie.
	if resp, _ := withCookie(t, s, "hookd_ui", adminToken)(http.MethodGet, "/ui/", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("/ui/ with the admin token as the cookie: %d; want the sign-in redirect", resp.StatusCode)
	}
	if _, err := s.auth.Authenticate(context.Background(), adminToken); err != nil {
		t.Errorf("the admin token after a sign-out: %v; want it to work", err)
	}
}

// Signing out of the portal ends the session and revokes the link's token: the link, the API
// token and the cookie all stop working (they once kept working for the token's days).
func TestPortalSignOutRevokesLink(t *testing.T) {
	s := newSite(t, false)
	token, err := s.auth.IssueAppToken(context.Background(), s.acme.ID, 7*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	resp, _ := send(t, c, http.MethodGet, s.srv.URL+"/portal?token="+url.QueryEscape(token), nil)
	ck := cookieOf(resp, "hookd_portal")
	if resp.StatusCode != http.StatusSeeOther || ck == nil || ck.Value == token {
		t.Fatalf("portal link: %d, cookie %v; want a session cookie that is not the token", resp.StatusCode, ck)
	}
	kept := withCookie(t, s, "hookd_portal", ck.Value)
	if resp, _ := kept(http.MethodGet, "/portal/app/"+s.acme.ID, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("the portal with its cookie: %d", resp.StatusCode)
	}
	if resp, _ := kept(http.MethodPost, "/portal/logout", nil, "Origin", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a portal sign-out from another site: %d; want 403", resp.StatusCode)
	}
	if resp, _ := kept(http.MethodPost, "/portal/logout", nil, "Origin", s.srv.URL); resp.StatusCode != http.StatusOK {
		t.Fatalf("portal sign-out: %d", resp.StatusCode)
	}
	if resp, _ := kept(http.MethodGet, "/portal/app/"+s.acme.ID, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the portal with the cookie kept after sign-out: %d; want 401", resp.StatusCode)
	}
	if resp, _ := send(t, browser(t), http.MethodGet, s.srv.URL+"/portal?token="+url.QueryEscape(token), nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the link after sign-out: %d; want 401", resp.StatusCode)
	}
	resp, _ = send(t, http.DefaultClient, http.MethodGet, s.srv.URL+"/api/v1/app/"+s.acme.ID, nil, "Authorization", "Bearer "+token)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the link's token on the API after sign-out: %d; want 401", resp.StatusCode)
	}
}

// With an https public URL the cookies are Secure, and a form must come from that origin; without
// one, from the request's own scheme and host (a form of https://host posting to http://host is
// another origin).
func TestPublicURLCookiesAndOrigin(t *testing.T) {
	s := newSiteWith(t, siteConfig{publicURL: "https://hooks.example.test"})
	c := browser(t)
	resp, _ := send(t, c, http.MethodPost, s.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Origin", s.srv.URL)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign in from the listener's origin, not the public one: %d; want 403", resp.StatusCode)
	}
	resp, _ = send(t, c, http.MethodPost, s.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Origin", "https://hooks.example.test")
	if ck := cookieOf(resp, "hookd_ui"); resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.Secure {
		t.Fatalf("sign in from the public origin: %d, cookie %v; want a Secure cookie", resp.StatusCode, ck)
	}
	token, err := s.auth.IssueAppToken(context.Background(), s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = send(t, c, http.MethodGet, s.srv.URL+"/portal?token="+url.QueryEscape(token), nil)
	if ck := cookieOf(resp, "hookd_portal"); ck == nil || !ck.Secure || ck.SameSite != http.SameSiteStrictMode || ck.Partitioned {
		t.Errorf("portal cookie %v; want Secure, SameSite=Strict (no site may frame it)", ck)
	}

	plain := newSite(t, false)
	u, _ := url.Parse(plain.srv.URL)
	for _, origin := range []string{"https://" + u.Host, "http://" + u.Hostname() + ":1", "null"} {
		resp, _ := send(t, browser(t), http.MethodPost, plain.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Origin", origin)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign in with Origin %s to %s: %d; want 403", origin, plain.srv.URL, resp.StatusCode)
		}
	}
	resp, _ = send(t, browser(t), http.MethodPost, plain.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Referer", "https://"+u.Host+"/ui/login")
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign in with an https Referer to http: %d; want 403", resp.StatusCode)
	}
	resp, _ = send(t, browser(t), http.MethodPost, plain.srv.URL+"/ui/login", url.Values{"token": {adminToken}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign in with neither Origin nor Referer: %d; want 403", resp.StatusCode)
	}
	resp, _ = send(t, browser(t), http.MethodPost, plain.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Referer", plain.srv.URL+"/ui/login")
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign in with this site's Referer only: %d; want 303", resp.StatusCode)
	}
}

// A portal link does not replace the browser's portal session of another application without
// asking: it shows a page whose form (same origin only) switches. A link of the same application
// replaces the session.
func TestPortalLinkAsksBeforeSwitching(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	mine, err := s.auth.IssueAppToken(ctx, s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.auth.IssueAppToken(ctx, s.globex.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.auth.IssueAppToken(ctx, s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	if code, loc, _ := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(mine)); code != http.StatusSeeOther || loc != "/portal/app/"+s.acme.ID {
		t.Fatalf("my link: %d → %q", code, loc)
	}
	code, _, body := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(theirs))
	if code != http.StatusOK || !strings.Contains(body, "signed in to the portal of Acme") || !strings.Contains(body, `action="/portal"`) {
		t.Fatalf("another application's link while signed in: %d; want the page that asks\n%s", code, body)
	}
	if code, _, body := get(t, c, s.srv.URL+"/portal/app/"+s.acme.ID); code != http.StatusOK || !strings.Contains(body, "Acme") {
		t.Fatalf("my portal after the other link: %d; want it still open", code)
	}
	if code, _, _ := get(t, c, s.srv.URL+"/portal/app/"+s.globex.ID); code != http.StatusForbidden {
		t.Errorf("the other application's portal before switching: %d; want 403", code)
	}
	// Another site cannot press the switch.
	if code, _, _ := post(t, c, s.srv.URL+"/portal", "https://evil.example", url.Values{"token": {theirs}}); code != http.StatusForbidden {
		t.Errorf("a switch posted from another site: %d; want 403", code)
	}
	if code, _, _ := get(t, c, s.srv.URL+"/portal/app/"+s.acme.ID); code != http.StatusOK {
		t.Errorf("my portal after a refused switch: %d; want 200", code)
	}
	if code, _, _ := post(t, c, s.srv.URL+"/portal", s.srv.URL, url.Values{"token": {"hookd_app_nope"}}); code != http.StatusUnauthorized {
		t.Errorf("a switch to a bad token: %d; want 401", code)
	}
	if code, _, _ := get(t, c, s.srv.URL+"/portal/app/"+s.acme.ID); code != http.StatusOK {
		t.Errorf("my portal after a switch to a bad token: %d; want 200 (the session stays)", code)
	}
	if code, loc, _ := post(t, c, s.srv.URL+"/portal", s.srv.URL, url.Values{"token": {theirs}}); code != http.StatusSeeOther || loc != "/portal/app/"+s.globex.ID {
		t.Fatalf("the switch: %d → %q", code, loc)
	}
	if code, _, _ := get(t, c, s.srv.URL+"/portal/app/"+s.acme.ID); code != http.StatusForbidden {
		t.Errorf("my portal after switching: %d; want 403", code)
	}
	if _, err := s.auth.Authenticate(ctx, mine); err != nil {
		t.Errorf("my link's token after switching: %v; want it to work (a switch signs out, it does not revoke)", err)
	}
	// My link, now that the browser is on the other portal, asks too; once back, a second link of
	// my application goes straight in.
	if code, loc, _ := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(mine)); code != http.StatusOK || loc != "" {
		t.Fatalf("my link while on the other portal: %d → %q; want the page that asks", code, loc)
	}
	if code, loc, _ := post(t, c, s.srv.URL+"/portal", s.srv.URL, url.Values{"token": {mine}}); code != http.StatusSeeOther || loc != "/portal/app/"+s.acme.ID {
		t.Fatalf("switch back: %d → %q", code, loc)
	}
	if code, loc, _ := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(again)); code != http.StatusSeeOther || loc != "/portal/app/"+s.acme.ID {
		t.Errorf("a second link of my application: %d → %q; want straight in", code, loc)
	}
}

// The CSP has base-uri 'none'; the dashboard is never framed; the portal is framed only by the
// configured origins, with X-Frame-Options: DENY when there are none; over HTTPS with origins
// configured, the portal's cookie is SameSite=None, Secure and Partitioned, so that it works in
// their iframes.
func TestFrameHeaders(t *testing.T) {
	s := newSiteWith(t, siteConfig{tls: true, frameAncestors: []string{"https://app.example.test", "https://*.shop.example.test:8443"}})
	c := s.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test's own certificate
	for path, want := range map[string]string{
		"/ui/login":      "frame-ancestors 'none'",
		"/portal?token=": "frame-ancestors https://app.example.test https://*.shop.example.test:8443",
	} {
		resp, _ := send(t, c, http.MethodGet, s.srv.URL+path, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "base-uri 'none'") || !strings.HasSuffix(csp, want) {
			t.Errorf("%s: CSP %q; want base-uri 'none' and %s", path, csp, want)
		}
		xfo := resp.Header.Get("X-Frame-Options")
		if (path == "/ui/login") != (xfo == "DENY") {
			t.Errorf("%s: X-Frame-Options %q", path, xfo)
		}
	}
	token, err := s.auth.IssueAppToken(context.Background(), s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := send(t, c, http.MethodGet, s.srv.URL+"/portal?token="+url.QueryEscape(token), nil)
	if ck := cookieOf(resp, "hookd_portal"); ck == nil || !ck.Secure || ck.SameSite != http.SameSiteNoneMode || !ck.Partitioned || !ck.HttpOnly {
		t.Errorf("framed portal's cookie %v; want HttpOnly, Secure, SameSite=None, Partitioned", ck)
	}
	resp, _ = send(t, c, http.MethodPost, s.srv.URL+"/ui/login", url.Values{"token": {adminToken}}, "Origin", s.srv.URL)
	if ck := cookieOf(resp, "hookd_ui"); ck == nil || !ck.Secure || ck.SameSite != http.SameSiteStrictMode || ck.Partitioned {
		t.Errorf("dashboard's cookie over HTTPS %v; want Secure, SameSite=Strict", ck)
	}
}

func TestParseFrameAncestors(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"'none'":                  "",
		"https://app.example.com": "https://app.example.com",
		"https://App.Example.com:8443, http://localhost:3000": "https://app.example.com:8443 http://localhost:3000",
		"https://*.example.com https://b.example":             "https://*.example.com https://b.example",
	} {
		got, err := ui.ParseFrameAncestors(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("ParseFrameAncestors(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"*", "app.example.com", "https://app.example.com/path", "https://a.example;script-src *",
		"'self'", "https://", "data:", "https://a.example?x", "https://u@a.example", "javascript:x", "https://*"} {
		if got, err := ui.ParseFrameAncestors(in); err == nil {
			t.Errorf("ParseFrameAncestors(%q) = %q; want an error", in, got)
		}
	}
}
