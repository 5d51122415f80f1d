package ui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
	"github.com/hookd/hookd/ui"
)

const adminToken = "hookd_sk_ui_test_token_0123456789"

// site is hookd's API and pages over a client on a SQLite file, as hookd serve mounts them.
type site struct {
	srv    *httptest.Server
	client *hookd.Client
	auth   *server.TokenAuth
	acme   *hookd.Application
	globex *hookd.Application
}

// newSite builds the site; with start, its client's workers run (deliveries are made; a failed
// one waits an hour for its retry, so that it stays failed while a test looks).
func newSite(t *testing.T, start bool) *site {
	t.Helper()
	return newSiteOver(t, start, nil)
}

// newSiteOver is newSite with the client's store seen through wrap (nil: as it is); the tokens
// and the two applications are the store's own.
func newSiteOver(t *testing.T, start bool, wrap func(hookd.Store) hookd.Store) *site {
	t.Helper()
	return newSiteWith(t, siteConfig{start: start, wrap: wrap})
}

// siteConfig is how newSiteWith builds a site.
type siteConfig struct {
	start bool
	wrap  func(hookd.Store) hookd.Store
	// publicURL and frameAncestors go to the API's and the pages' configuration.
	publicURL      string
	frameAncestors []string
	tls            bool // serve over HTTPS (a self-signed certificate)
	// portalTitle, portalLogo and portalAccent go to the pages' configuration.
	portalTitle, portalLogo, portalAccent string
}

func newSiteWith(t *testing.T, sc siteConfig) *site {
	t.Helper()
	start, wrap := sc.start, sc.wrap
	ctx := context.Background()
	log := logcheck.New(t) // first, so that it is checked once everything stopped
	log.Secret(adminToken)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	log.SecretsAtCleanup(t, store) // after the client's Stop, before the store closes
	var seen hookd.Store = store
	if wrap != nil {
		seen = wrap(store)
	}
	c, err := hookd.NewClient(seen, &hookd.Config{Logger: log.Logger(), Delivery: &delivery.Config{Timeout: 2 * time.Second,
		AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, RetrySchedule: []time.Duration{time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Stop(sctx); err != nil {
				t.Errorf("stop the client: %v", err)
			}
		})
	}
	auth, _, err := server.NewTokenAuth(ctx, store, adminToken, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(c, &server.Config{Auth: auth, Logger: log.Logger(), PublicURL: sc.publicURL})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := ui.New(c, auth, &ui.Config{Logger: log.Logger(), PublicURL: sc.publicURL, PortalFrameAncestors: sc.frameAncestors,
		PortalTitle: sc.portalTitle, PortalLogoURL: sc.portalLogo, PortalAccent: sc.portalAccent})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	for _, p := range []string{"/ui/", "/portal", "/portal/"} {
		mux.Handle(p, pages)
	}
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusSeeOther))
	srv := httptest.NewUnstartedServer(mux)
	if sc.tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	s := &site{srv: srv, client: c, auth: auth}
	if s.acme, err = c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if s.globex, err = c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Globex", UID: "globex"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// browser is an HTTP client with cookies that does not follow redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (int, string, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func post(t *testing.T, c *http.Client, u, origin string, form url.Values) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func TestDashboardSignIn(t *testing.T) {
	s := newSite(t, false)
	c := browser(t)
	if code, loc, _ := get(t, c, s.srv.URL+"/ui/"); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/login") {
		t.Fatalf("/ui/ signed out: %d → %q, want a redirect to the sign-in page", code, loc)
	}
	appToken, err := s.auth.IssueAppToken(context.Background(), s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"wrong", appToken} {
		if code, _, body := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {tok}}); code != http.StatusUnauthorized || !strings.Contains(body, "not the admin token") {
			t.Errorf("sign in with %.10s…: %d", tok, code)
		}
	}
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", "https://evil.example", url.Values{"token": {adminToken}}); code != http.StatusForbidden {
		t.Errorf("sign in from another origin: %d, want 403", code)
	}
	if code, loc, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}, "next": {"//evil.example/"}}); code != http.StatusSeeOther || loc != "/ui/" {
		t.Fatalf("sign in: %d → %q, want /ui/ (an outside next is dropped)", code, loc)
	}
	code, _, body := get(t, c, s.srv.URL+"/ui/")
	if code != http.StatusOK || !strings.Contains(body, "Acme") || !strings.Contains(body, "Globex") {
		t.Fatalf("applications page: %d\n%s", code, body)
	}
	// A button pressed from another site does nothing.
	ep, err := s.client.CreateEndpoint(context.Background(), s.acme.ID, &hookd.EndpointIn{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	action := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID + "/disable"
	if code, _, _ := post(t, c, action, "https://evil.example", nil); code != http.StatusForbidden {
		t.Errorf("disable from another origin: %d, want 403", code)
	}
	if code, _, _ := post(t, c, action, s.srv.URL, nil); code != http.StatusSeeOther {
		t.Errorf("disable: %d, want 303", code)
	}
	if got, _ := s.client.GetEndpoint(context.Background(), s.acme.ID, ep.ID); !got.Disabled {
		t.Error("the endpoint is not disabled")
	}
	if code, loc, _ := post(t, c, s.srv.URL+"/ui/logout", s.srv.URL, nil); code != http.StatusSeeOther || loc != "/ui/login" {
		t.Errorf("sign out: %d → %q", code, loc)
	}
	// A button pressed once signed out leads back, after sign-in, to the page it was on.
	req, _ := http.NewRequest(http.MethodPost, action, nil)
	req.Header.Set("Referer", s.srv.URL+"/ui/app/"+s.acme.ID)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != "/ui/login?next="+url.QueryEscape("/ui/app/"+s.acme.ID) {
		t.Errorf("a form signed out goes to %q", loc)
	}
	// Neither the dashboard nor, by default, the portal is framed (TestFrameHeaders).
	for _, p := range []string{"/ui/login", "/portal?token=x"} {
		if resp, err := http.Get(s.srv.URL + p); err == nil {
			resp.Body.Close()
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || resp.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s: CSP %q, X-Frame-Options %q", p, csp, resp.Header.Get("X-Frame-Options"))
			}
		}
	}
}

func TestPortalSeesOneApplication(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	if _, err := s.client.CreateEndpoint(ctx, s.globex.ID, &hookd.EndpointIn{URL: "https://globex.example/secret-hook"}); err != nil {
		t.Fatal(err)
	}
	m, err := s.client.Send(ctx, "globex", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.auth.IssueAppToken(ctx, s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	if code, _, _ := get(t, c, s.srv.URL+"/portal?token=nope"); code != http.StatusUnauthorized {
		t.Errorf("portal with a bad token: %d, want 401", code)
	}
	code, loc, _ := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(token))
	if code != http.StatusSeeOther || loc != "/portal/app/"+s.acme.ID {
		t.Fatalf("portal link: %d → %q, want the application's page without the token", code, loc)
	}
	if code, _, body := get(t, c, s.srv.URL+loc); code != http.StatusOK || !strings.Contains(body, "Acme") {
		t.Fatalf("portal page: %d", code)
	}
	for _, p := range []string{
		"/portal/app/" + s.globex.ID,
		"/portal/app/globex",
		"/portal/app/" + s.globex.ID + "/msg/" + m.Message.ID,
	} {
		code, _, body := get(t, c, s.srv.URL+p)
		if code != http.StatusForbidden || strings.Contains(body, "secret-hook") {
			t.Errorf("%s: %d, want 403 without the other application's data", p, code)
		}
	}
	// The portal's cookie is not the dashboard's.
	if code, _, _ := get(t, c, s.srv.URL+"/ui/"); code != http.StatusSeeOther {
		t.Errorf("/ui/ with a portal cookie: %d, want the sign-in redirect", code)
	}
	if code, _, _ := get(t, browser(t), s.srv.URL+"/portal/app/"+s.acme.ID); code != http.StatusUnauthorized {
		t.Errorf("portal page without a cookie: %d, want 401", code)
	}
}

func TestMessageLogFilters(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	for _, typ := range []string{"invoice.paid", "user.created"} {
		if _, err := s.client.Send(ctx, "acme", &hookd.MessageIn{EventType: typ, Payload: map[string]string{"type": typ}}); err != nil {
			t.Fatal(err)
		}
	}
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	page := s.srv.URL + "/ui/app/" + s.acme.ID
	if _, _, body := get(t, c, page+"?type=user.created"); !strings.Contains(body, "user.created") || strings.Contains(body, "<td>invoice.paid</td>") {
		t.Errorf("filtered by event type: %s", body)
	}
	// The pager keeps the filters.
	for i := range 25 {
		if _, err := s.client.Send(ctx, "acme", &hookd.MessageIn{EventType: "user.created", Payload: map[string]int{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, body := get(t, c, page+"?type=user.created"); !strings.Contains(body, "?type=user.created&after=msg_") {
		t.Errorf("the next page's link drops the filter:\n%s", body)
	}
	for _, q := range []string{"?status=lost", "?from=yesterday"} {
		if code, _, body := get(t, c, page+q); code != http.StatusBadRequest || !strings.Contains(body, strings.SplitN(q[1:], "=", 2)[0]) {
			t.Errorf("%s: %d, want 400 naming the field", q, code)
		}
	}
	if code, _, _ := get(t, c, s.srv.URL+"/ui/app/app_missing"); code != http.StatusNotFound {
		t.Errorf("a missing application: %d, want 404", code)
	}
}

// TestAppPageEndpointHealth: the application page shows each endpoint's attempts in the last
// 24 hours and their success rate, for every endpoint, from one count.
func TestAppPageEndpointHealth(t *testing.T) {
	s := newSite(t, true)
	ctx := context.Background()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer ok.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer failing.Close()
	for _, u := range []string{ok.URL + "/ok", failing.URL + "/failing", ok.URL + "/idle"} {
		in := &hookd.EndpointIn{URL: u}
		if strings.HasSuffix(u, "/idle") {
			in.EventTypes = []string{"never.sent"}
		}
		if _, err := s.client.CreateEndpoint(ctx, "acme", in); err != nil {
			t.Fatal(err)
		}
	}
	// Another application's attempts are not counted.
	if _, err := s.client.CreateEndpoint(ctx, "globex", &hookd.EndpointIn{URL: ok.URL + "/globex"}); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"acme", "acme", "acme", "globex"} {
		if _, err := s.client.Send(ctx, app, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]bool{"paid": true}}); err != nil {
			t.Fatal(err)
		}
	}
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	want := []string{
		`<span class="good">100.0 %</span> <span class="muted">of 3</span>`, // /ok
		`<span class="bad">0.0 %</span> <span class="muted">of 3</span>`,    // /failing (each retries in an hour)
		`<span class="muted">no attempts</span>`,                            // /idle
	}
	page := s.srv.URL + "/ui/app/" + s.acme.ID
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, _, body = get(t, c, page)
		missing := false
		for _, w := range want {
			missing = missing || !strings.Contains(body, w)
		}
		if !missing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoints' health is not %q:\n%s", want, body)
		}
	}

	// The log filtered by status lists the deliveries with that status, each with its message.
	for status, n := range map[string]int{"delivered": 3, "pending": 3, "failed": 0} {
		_, _, body := get(t, c, page+"?status="+status)
		if got := strings.Count(body, `<span class="status-`+status+`">`); got != n {
			t.Errorf("?status=%s: %d deliveries shown, want %d:\n%s", status, got, n, body)
		}
		if got := strings.Count(body, "<td>invoice.paid</td>"); got != n {
			t.Errorf("?status=%s: %d messages shown, want %d", status, got, n)
		}
	}
}
