package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// chromiumPath is where Debian's chromium package installs the browser.
const chromiumPath = "/usr/bin/chromium"

// Bounds of the browser test's steps.
const (
	chromeStartTimeout = 30 * time.Second // the browser's start and its first tab
	chromeStepTimeout  = 10 * time.Second // one navigation, form or query
	chromeWaitTimeout  = 15 * time.Second // until a delivery shows on a page
	chromeMaxPNG       = 400 << 10        // a full-page screenshot larger than this is cut to the viewport
)

// TestDashboardInBrowser drives the dashboard and the portal in headless Chromium, as an
// operator and a customer would: sign in, add endpoints, send examples, watch the attempts,
// resend a failed delivery, open a portal link. It writes screenshots of the pages to
// $HOOKD_UI_SCREENSHOTS (default: a temporary directory).
func TestDashboardInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no Chromium at %s (%v): install Debian's chromium (apt-get install chromium) to run this test", chromiumPath, err)
	}
	began := time.Now()
	shots := os.Getenv("HOOKD_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	d := startBrowserDashboard(t)
	rcv := hookdtest.NewReceiver()
	t.Cleanup(rcv.Close)
	rcv.Handle("/ok", hookdtest.OK())
	rcv.Handle("/fail", hookdtest.Status(http.StatusInternalServerError, `{"error":"boom"}`))
	tab := newChromeTab(t, d.url)
	appPath := "/ui/app/" + d.acme.ID

	// a. Sign in: /ui/ sends the browser to the login form; the admin token opens the list.
	tab.open("/ui/")
	if loc := tab.location(); !strings.Contains(loc, "/ui/login") {
		t.Fatalf("a: /ui/ without a cookie is at %s; want the login form", loc)
	}
	tab.do("a: type the admin token", chromedp.SendKeys(chromedp.ID("token"), d.token))
	tab.submit("a: sign in", `button[type=submit]`)
	if loc := tab.location(); loc != d.url+"/ui/" {
		t.Fatalf("a: after signing in at %s; want %s/ui/", loc, d.url)
	}
	for _, app := range []*hookd.Application{d.acme, d.globex} {
		sel := fmt.Sprintf(`a[href="/ui/app/%s"]`, app.ID)
		if got := tab.text("a: the applications list", sel); got != app.Name {
			t.Errorf("a: the link to %s reads %q; want %q", app.ID, got, app.Name)
		}
	}

	// b. Add an endpoint that answers 200; the form lands on the endpoint's page.
	tab.submit("b: open Acme", fmt.Sprintf(`a[href="%s"]`, appPath))
	if h1 := tab.text("b: Acme's page", "h1"); h1 != "Acme" {
		t.Fatalf("b: Acme's page has the heading %q", h1)
	}
	okEP := tab.addEndpoint("b", rcv.URL("/ok"))

	// c. Send an example; its page shows the attempt once the worker has made it.
	tab.submit("c: back to Acme", fmt.Sprintf(`p.crumbs a[href="%s"]`, appPath))
	msg1 := tab.sendExample("c", "invoice.paid", `{"n":1}`)
	tab.waitFor("c: the attempt with 200 on "+msg1, destinationJS(okEP, `rows.some(r => status(r) === "200")`))

	// d. A second endpoint that answers 500 {"error":"boom"}; the next example fails there.
	tab.open(appPath)
	failEP := tab.addEndpoint("d", rcv.URL("/fail"))
	tab.open(appPath)
	msg2 := tab.sendExample("d", "invoice.paid", `{"n":2}`)
	tab.waitFor("d: the attempt with 500 boom on "+msg2, destinationJS(failEP,
		`rows.some(r => status(r) === "500" && r.querySelector("pre.response").textContent.includes("boom"))`))
	tab.waitFor("d: the attempt with 200 on "+msg2, destinationJS(okEP, `rows.some(r => status(r) === "200")`))

	// e. Resend the failed delivery: a second, manual attempt appears under that endpoint.
	tab.submit("e: resend", fmt.Sprintf(`article.destination:has(a[href$="/endpoint/%s"]) button.resend`, failEP))
	if loc := tab.location(); !strings.HasSuffix(loc, "/msg/"+msg2+"?flash=resent") {
		t.Errorf("e: after Resend at %s; want the message's page with ?flash=resent", loc)
	}
	if got := tab.text("e: the flash", "p.flash"); got != "Done: resent." {
		t.Errorf("e: the flash reads %q", got)
	}
	tab.waitFor("e: the manual attempt on "+msg2, destinationJS(failEP,
		`rows.length === 2 && rows.some(r => r.cells[0].textContent.includes("manual") && status(r) === "500")`))
	tab.screenshot(shots, "dashboard-message.png")

	// i. Attempt detail: the failed attempt's request and response, and a copy button.
	tab.submit("i: open the failed attempt", fmt.Sprintf(`article.destination:has(a[href$="/endpoint/%s"]) tr.attempt:last-child a.attempt-link`, failEP))
	if got := tab.text("i: the response's status", "#response-status"); got != "500" {
		t.Errorf("i: the attempt's response status reads %q; want 500", got)
	}
	if hs := tab.text("i: the request's headers", "#request-headers"); !strings.Contains(hs, "Webhook-Signature\tv1,") {
		t.Errorf("i: the request's headers do not show the signature:\n%s", hs)
	}
	if got := tab.text("i: the response body", "#response-body"); got != `{"error":"boom"}` {
		t.Errorf("i: the response body reads %q", got)
	}
	if got := tab.text("i: the trigger", "#trigger"); got != "scheduled" {
		t.Errorf("i: the trigger reads %q; want scheduled", got)
	}
	tab.do("i: copy the attempt's id", chromedp.Click(chromedp.CSS(`button[data-copy="attempt-id"]`)))
	tab.waitText("i: the copy button's answer", `button[data-copy="attempt-id"]`, "Copied")
	tab.screenshot(shots, "dashboard-attempt.png")

	// g. The application's page, with its chart, now that attempts exist.
	tab.open(appPath)
	if n := tab.count("g: the chart's bars", `svg.chart rect.ok, svg.chart rect.fail`); n < 2 {
		t.Errorf("g: the chart has %d bars of succeeded or failed attempts; want both kinds", n)
	}
	if n := tab.count("g: the message log", `table.log a[href*="/msg/"]`); n != 2 {
		t.Errorf("g: the message log links %d messages; want 2", n)
	}
	tab.screenshot(shots, "dashboard-app.png")

	// h. Find a message: its id in the search box opens its page; the log counts its deliveries.
	if got := tab.text("h: the log's deliveries", `table.log tr:has(a[href$="/msg/`+msg2+`"]) td.counts`); got != "1 delivered 1 pending" {
		t.Errorf("h: the log shows %s's deliveries as %q; want %q", msg2, got, "1 delivered 1 pending")
	}
	tab.do("h: type the message's id", chromedp.SendKeys(chromedp.ID("find-q"), msg2))
	tab.submit("h: find", `#find button[type=submit]`)
	if loc := tab.location(); loc != d.url+appPath+"/msg/"+msg2 {
		t.Errorf("h: finding %s leads to %s", msg2, loc)
	}

	// j. Endpoints: send a test event, edit, and delete after the confirmation.
	tab.open(appPath + "/endpoint/" + okEP)
	if got := tab.text("j: the endpoint's stats", "#stats"); !strings.HasSuffix(got, "0 failed") || strings.HasPrefix(got, "0 ") {
		t.Errorf("j: the endpoint's stats read %q; want successes and 0 failed", got)
	}
	tab.submit("j: send a test event", `#test-event button[type=submit]`)
	pingMsg := messagePageRE.FindStringSubmatch(strings.SplitN(tab.location(), "?", 2)[0])
	if pingMsg == nil {
		t.Fatalf("j: the test event leads to %s; want its message's page", tab.location())
	}
	tab.waitFor("j: the test event delivered", destinationJS(okEP, `rows.some(r => status(r) === "200")`))
	if n := tab.count("j: the test event's endpoints", "article.destination"); n != 1 {
		t.Errorf("j: the test event went to %d endpoints; want 1", n)
	}
	tab.open(appPath + "/endpoint/" + okEP)
	tab.submit("j: edit", "#edit")
	tab.do("j: change the description", chromedp.SetValue(chromedp.ID("description"), "orders, from the browser"))
	tab.submit("j: save", `#edit-endpoint button[type=submit]`)
	if got := tab.text("j: the flash", "p.flash"); got != "Done: saved." {
		t.Errorf("j: after saving, the flash reads %q", got)
	}
	if got := tab.text("j: the description", "p.description"); !strings.Contains(got, "orders, from the browser") {
		t.Errorf("j: the endpoint's description reads %q", got)
	}
	tab.screenshot(shots, "dashboard-endpoint.png")
	tab.open(appPath)
	spareEP := tab.addEndpoint("j", rcv.URL("/spare"))
	tab.submit("j: delete", "#delete")
	tab.screenshot(shots, "dashboard-endpoint-delete.png")
	tab.submit("j: confirm", "#confirm-delete")
	if n := tab.count("j: the deleted endpoint's link", `table.endpoints a[href$="/endpoint/`+spareEP+`"]`); n != 0 {
		t.Errorf("j: the deleted endpoint is still listed")
	}

	// l. Live enough: the application's page reloads itself, filters kept, and shows a message
	// sent meanwhile; the Refresh link keeps the filters too.
	tab.open(appPath + "?type=invoice.paid")
	tab.do("l: mark the page", chromedp.Evaluate[chromedp.Void](`window.hookdMark = 1`))
	later, err := d.client.Send(context.Background(), d.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 9}})
	if err != nil {
		t.Fatal(err)
	}
	tab.waitLive("l: the new message without a reload by hand", fmt.Sprintf(
		`window.hookdMark === undefined && location.search === "?type=invoice.paid" && !!document.querySelector('table.log a[href$="/msg/%s"]')`, later.Message.ID))
	tab.submit("l: refresh", "#refresh")
	if loc := tab.location(); loc != d.url+appPath+"?type=invoice.paid" {
		t.Errorf("l: Refresh leads to %s; want the filters kept", loc)
	}

	// f. The portal: a link opens Acme's page only.
	link := d.portalLink(t, d.acme.ID)
	tab.openURL(link)
	if loc := tab.location(); loc != d.url+"/portal/app/"+d.acme.ID {
		t.Fatalf("f: the portal link leads to %s; want %s/portal/app/%s", loc, d.url, d.acme.ID)
	}
	if h1 := tab.text("f: the portal's page", "h1"); h1 != "Acme" {
		t.Errorf("f: the portal's page has the heading %q", h1)
	}
	if n := tab.count("f: the portal's endpoints", `table.endpoints a[href^="/portal/app/`+d.acme.ID+`/endpoint/"]`); n != 2 {
		t.Errorf("f: the portal lists %d endpoints; want 2", n)
	}
	if n := tab.count("f: the portal's crumbs", `a[href="/portal/"], a[href="/ui/"]`); n != 1 {
		// the brand link only: the portal has no "Applications" crumb
		t.Errorf("f: the portal links %d home pages; want the brand's only", n)
	}
	if got := tab.text("f: the portal's brand", "header .brand"); got != "Acme Webhooks" {
		t.Errorf("f: the portal's header reads %q; want the operator's title", got)
	}
	if n := tab.eval("f: the portal's accent", `getComputedStyle(document.querySelector("#find button")).backgroundColor === "rgb(10, 125, 90)" ? 1 : 0`); n != 1 {
		t.Error("f: the portal's buttons are not in the operator's accent #0a7d5a")
	}
	if n := tab.eval("f: the portal's words", `/circuit|hookd/i.test(document.body.innerText) ? 1 : 0`); n != 0 {
		t.Error("f: the portal's page says \"circuit\" or \"hookd\"")
	}
	tab.screenshot(shots, "portal.png")
	if code := tab.openStatus("/portal/app/" + d.globex.ID); code != http.StatusForbidden {
		t.Errorf("f: Globex's page through Acme's portal answered %d; want 403", code)
	}
	if got := tab.text("f: the refusal", "p.notice"); got != "This page belongs to another application." {
		t.Errorf("f: the refusal reads %q", got)
	}
	// k. The portal's event type catalogue.
	tab.open("/portal/app/" + d.acme.ID)
	tab.submit("k: open the catalogue", "#catalogue")
	if got := tab.text("k: the catalogue's entry", "#et-invoice\\.paid h2"); got != "invoice.paid" {
		t.Errorf("k: the catalogue's entry reads %q", got)
	}
	tab.screenshot(shots, "portal-event-types.png")

	// The portal's search finds nothing of Globex's.
	globexMsg, err := d.client.Send(context.Background(), d.globex.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	tab.open("/portal/app/" + d.acme.ID)
	tab.do("f: type Globex's message id", chromedp.SendKeys(chromedp.ID("find-q"), globexMsg.Message.ID))
	tab.do("f: find", chromedp.Click(chromedp.CSS(`#find button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if got := tab.text("f: the search's answer", "p.notice"); !strings.HasPrefix(got, "Nothing in Acme has the id or event id") {
		t.Errorf("f: the portal's search for Globex's message answers %q", got)
	}
	plain := &http.Client{Timeout: chromeStepTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := plain.Get(d.url + "/portal/app/" + d.globex.ID)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("f: /portal/app/%s without a cookie answered %d; want 401", d.globex.ID, resp.StatusCode)
	}

	t.Logf("the browser test took %v", time.Since(began).Round(time.Millisecond))
}

// browserDashboard is hookd's API and pages on an httptest server, built as hookd serve builds them.
type browserDashboard struct {
	url    string
	token  string // the admin token
	client *hookd.Client
	acme   *hookd.Application
	globex *hookd.Application
}

func startBrowserDashboard(t *testing.T) *browserDashboard {
	t.Helper()
	s := newSiteWith(t, siteConfig{start: true, portalTitle: "Acme Webhooks", portalAccent: "#0a7d5a"})
	if _, err := s.client.UpsertEventType(context.Background(), &hookd.EventType{Name: "invoice.paid", Description: "An invoice was paid in full.",
		Schemas: json.RawMessage(`{"1":{"type":"object","properties":{"invoice":{"type":"string"},"amount":{"type":"integer"}},"examples":[{"invoice":"in_1001","amount":4200}]}}`)}); err != nil {
		t.Fatal(err)
	}
	return &browserDashboard{url: s.srv.URL, token: adminToken, client: s.client, acme: s.acme, globex: s.globex}
}

// portalLink asks the API for a portal link to the application, as a customer's backend would.
func (d *browserDashboard) portalLink(t *testing.T, appID string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.url+"/api/v1/auth/app-portal-access/"+url.PathEscape(appID), strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: chromeStepTimeout}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("app-portal-access: %d, %v", resp.StatusCode, err)
	}
	if out.Token == "" || out.URL != d.url+"/portal?token="+url.QueryEscape(out.Token) {
		t.Fatalf("app-portal-access: url %q, token %q", out.URL, out.Token)
	}
	return out.URL
}

// chromeTab is one tab of a headless Chromium, on the pages at base.
type chromeTab struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// newChromeTab starts a headless Chromium with the flags this machine needs, and extra.
func newChromeTab(t *testing.T, base string, extra ...chromedp.ExecAllocatorOption) *chromeTab {
	t.Helper()
	var out chromeOutput
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(&out),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc) // kills the browser if closing it below failed
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		_ = chromedp.Cancel(cctx) // closes the browser
		cancel()
		if t.Failed() {
			t.Logf("Chromium's output:\n%s", out.tail(4<<10))
		}
	})
	// The first Run starts the browser for the life of ctx, so it takes no timeout of its own:
	// a timer ends the allocator if the browser does not come up.
	watchdog := time.AfterFunc(chromeStartTimeout, cancelAlloc)
	err := chromedp.Do(ctx)
	if !watchdog.Stop() {
		err = fmt.Errorf("not up within %v: %w", chromeStartTimeout, err)
	}
	if err != nil {
		t.Fatalf("start Chromium (%s): %v\n%s", chromiumPath, err, out.tail(4<<10))
	}
	return &chromeTab{t: t, ctx: ctx, base: base}
}

// fatalf ends the test with what the tab shows.
func (b *chromeTab) fatalf(format string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	b.t.Fatalf("%s\nthe tab is at %s and shows:\n%s", fmt.Sprintf(format, args...), loc, text)
}

// do runs actions within the step timeout.
func (b *chromeTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fatalf("%s: %v", what, err)
	}
}

// open navigates to a path of the pages.
func (b *chromeTab) open(path string) { b.t.Helper(); b.openURL(b.base + path) }

func (b *chromeTab) openURL(u string) {
	b.t.Helper()
	if code := b.openStatusURL(u); code >= 400 {
		b.fatalf("open %s: HTTP %d", u, code)
	}
}

// openStatus navigates to a path and returns the HTTP status of the page it ends on.
func (b *chromeTab) openStatus(path string) int64 {
	b.t.Helper()
	return b.openStatusURL(b.base + path)
}

func (b *chromeTab) openStatusURL(u string) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		b.fatalf("open %s: %v", u, err)
	}
	if resp == nil {
		b.fatalf("open %s: no response", u)
	}
	return resp.Status
}

// submit clicks the link or button that sel selects, waits for the page it leads to, and fails
// the test unless that page is a success.
func (b *chromeTab) submit(what, sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Click(chromedp.CSS(sel)),
	)
	if err != nil {
		b.fatalf("%s: click %s: %v", what, sel, err)
	}
	if resp == nil || resp.Status >= 400 {
		code := int64(0)
		if resp != nil {
			code = resp.Status
		}
		b.fatalf("%s: click %s: HTTP %d", what, sel, code)
	}
}

func (b *chromeTab) location() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		b.fatalf("read the location: %v", err)
	}
	return loc
}

// text returns the visible text of the first element sel selects, waiting for it.
func (b *chromeTab) text(what, sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fatalf("%s: the text of %s: %v", what, sel, err)
	}
	return strings.TrimSpace(s)
}

// waitLive waits, without reloading, until the JavaScript expression cond is true: long enough
// for the page's own reload (liveEvery, 15 s) and its load.
func (b *chromeTab) waitLive(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second+chromeWaitTimeout)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			b.fatalf("%s: not shown within %v (last error: %v)", what, 15*time.Second+chromeWaitTimeout, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitText waits, without reloading, until the first element sel selects reads want.
func (b *chromeTab) waitText(what, sel, want string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.textContent.trim() === %s; })()`, strconv.Quote(sel), strconv.Quote(want))
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			b.fatalf("%s: %s does not read %q within %v (last error: %v)", what, sel, want, chromeStepTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// count returns how many elements sel selects now.
func (b *chromeTab) count(what, sel string) int {
	b.t.Helper()
	return b.eval(what, fmt.Sprintf(`document.querySelectorAll(%s).length`, strconv.Quote(sel)))
}

func (b *chromeTab) eval(what, js string) int {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
	if err != nil {
		b.fatalf("%s: %v", what, err)
	}
	return n
}

// waitFor reloads the page until the JavaScript expression cond is true.
func (b *chromeTab) waitFor(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeWaitTimeout)
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if ctx.Err() != nil {
			b.fatalf("%s: not shown within %v (last error: %v)", what, chromeWaitTimeout, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
			_ = chromedp.Do(ctx, chromedp.Reload())
		}
	}
}

// destinationJS is a condition on the attempt rows (rows, with status(row) its status code) of
// a message page's destination for endpoint ep.
func destinationJS(ep, cond string) string {
	return fmt.Sprintf(`(() => {
		const dest = document.querySelector('article.destination:has(a[href$="/endpoint/' + %s + '"])');
		if (!dest) return false;
		const rows = [...dest.querySelectorAll("tr.attempt")];
		const status = r => r.cells[2].textContent.trim();
		return %s;
	})()`, strconv.Quote(ep), cond)
}

var endpointPageRE = regexp.MustCompile(`/ui/app/[^/]+/endpoint/([^/?]+)\?flash=created$`)

// addEndpoint adds an endpoint on the application's page, checks the endpoint's page it lands on,
// and returns the endpoint's id.
func (b *chromeTab) addEndpoint(step, u string) string {
	b.t.Helper()
	b.openDetails(step, "#add-endpoint")
	b.do(step+": fill the endpoint's URL", chromedp.SendKeys(chromedp.ID("url"), u))
	b.submit(step+": add the endpoint", `#add-endpoint button[type=submit]`)
	loc := b.location()
	m := endpointPageRE.FindStringSubmatch(loc)
	if m == nil {
		b.fatalf("%s: adding an endpoint leads to %s; want its page", step, loc)
	}
	if h1 := b.text(step+": the endpoint's page", "h1.url"); h1 != u {
		b.t.Errorf("%s: the endpoint's page has the heading %q; want %q", step, h1, u)
	}
	for _, id := range []string{"disable", "reveal", "rotate", "recover"} {
		b.do(step+": the endpoint's "+id+" button", chromedp.WaitVisible(chromedp.ID(id)))
	}
	return m[1]
}

var messagePageRE = regexp.MustCompile(`/ui/app/[^/]+/msg/([^/?]+)$`)

// sendExample sends an example event from the application's page and returns the message's id.
func (b *chromeTab) sendExample(step, eventType, payload string) string {
	b.t.Helper()
	b.openDetails(step, "#send-example")
	b.do(step+": fill the example",
		chromedp.SendKeys(chromedp.ID("eventType"), eventType),
		chromedp.SetValue(chromedp.ID("payload"), payload),
	)
	b.submit(step+": send the example", `#send-example button[type=submit]`)
	loc := b.location()
	m := messagePageRE.FindStringSubmatch(loc)
	if m == nil {
		b.fatalf("%s: sending an example leads to %s; want the message's page", step, loc)
	}
	if h1 := b.text(step+": the message's page", "h1"); h1 != eventType {
		b.t.Errorf("%s: the message's page has the heading %q; want %q", step, h1, eventType)
	}
	return m[1]
}

// openDetails opens the collapsed <details> that holds form, as a click on its summary does.
func (b *chromeTab) openDetails(step, form string) {
	b.t.Helper()
	sel := fmt.Sprintf(`details:has(%s)`, form)
	if b.eval(step+": is "+form+" shown", fmt.Sprintf(`document.querySelector(%s).open ? 1 : 0`, strconv.Quote(sel))) == 1 {
		return
	}
	b.do(step+": open "+form, chromedp.Click(chromedp.CSS(sel+" > summary")), chromedp.WaitVisible(chromedp.CSS(form)))
}

// screenshot writes a PNG of the whole page to dir/name, or of the viewport when the whole page
// would be too large a file.
func (b *chromeTab) screenshot(dir, name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG; below, JPEG
	what := "full page"
	if err == nil && len(buf) > chromeMaxPNG {
		buf, err = chromedp.Run(ctx, chromedp.CaptureScreenshot()) // PNG of the viewport
		what = "viewport"
	}
	if err != nil {
		b.fatalf("screenshot %s: %v", name, err)
	}
	if !strings.HasPrefix(string(buf), "\x89PNG\r\n\x1a\n") {
		b.fatalf("screenshot %s: not a PNG", name)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot (%s): %s, %d KB", what, p, (len(buf)+1023)/1024)
}

// chromeOutput keeps what the browser writes, for the log of a failed test.
type chromeOutput struct {
	mu  sync.Mutex
	buf []byte
}

func (o *chromeOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	if len(o.buf) > 256<<10 { // keep the end
		o.buf = append(o.buf[:0], o.buf[len(o.buf)-128<<10:]...)
	}
	return len(p), nil
}

func (o *chromeOutput) tail(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return string(o.buf[max(0, len(o.buf)-n):])
}
