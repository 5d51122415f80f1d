package ui_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// TestPagesAtPhoneWidthInBrowser opens every kind of page in headless Chromium 390 px wide, a
// phone's width, and checks that none is wider than the screen (a wide table scrolls within
// itself). It writes docs' portal-phone.png to $HOOKD_UI_SCREENSHOTS when set.
func TestPagesAtPhoneWidthInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no Chromium at %s (%v): install Debian's chromium (apt-get install chromium) to run this test", chromiumPath, err)
	}
	s := newSiteWith(t, siteConfig{start: true, portalTitle: "Acme Webhooks"})
	ctx := context.Background()
	rcv := hookdtest.NewReceiver()
	t.Cleanup(rcv.Close)
	rcv.Handle("/a-rather-long-path/for/the/receiver/that/goes/on/webhooks", hookdtest.Status(http.StatusInternalServerError, `{"error":"boom"}`))
	if _, err := s.client.UpsertEventType(ctx, &hookd.EventType{Name: "invoice.paid", Description: "An invoice was paid.",
		Schemas: []byte(`{"1":{"type":"object","examples":[{"invoice":"in_1001","customer":"cus_0123456789abcdefghij"}]}}`)}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: rcv.URL("/a-rather-long-path/for/the/receiver/that/goes/on/webhooks"),
		Description: "billing events", Headers: map[string]string{"X-Api-Key": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", EventID: "in_1001",
		Payload: map[string]string{"invoice": "in_1001", "customer": "cus_0123456789abcdefghijklmnopqrstuvwxyz0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	var attempt string
	for deadline := time.Now().Add(chromeWaitTimeout); attempt == ""; time.Sleep(50 * time.Millisecond) {
		page, err := s.client.ListAttempts(ctx, s.acme.ID, hookd.AttemptFilter{MessageID: res.Message.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) > 0 {
			attempt = page.Data[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt")
		}
	}
	tab := newChromeTab(t, s.srv.URL, chromedp.WindowSize(390, 844))
	tab.do("set a phone's viewport", chromedp.EmulateViewport(390, 844))
	d := &browserDashboard{url: s.srv.URL, token: adminToken, client: s.client}
	app := "/app/" + s.acme.ID
	pages := []string{app, app + "/endpoint/" + ep.ID, app + "/endpoint/" + ep.ID + "/edit", app + "/msg/" + res.Message.ID,
		app + "/msg/" + res.Message.ID + "/attempt/" + attempt, app + "/event-types"}
	tab.openURL(d.portalLink(t, s.acme.ID))
	for _, p := range pages {
		tab.open("/portal" + p)
		if n := tab.eval("the width of "+p, `document.documentElement.scrollWidth`); n > 390 {
			t.Errorf("/portal%s is %d px wide at 390 px; wider: %s", p, n, tab.widest())
		}
		if n := tab.eval("the tables of "+p, cutTablesJS); n != 0 {
			t.Errorf("/portal%s has %d tables wider than the screen, which scroll sideways", p, n)
		}
	}
	tab.open("/portal" + app)
	if dir := os.Getenv("HOOKD_UI_SCREENSHOTS"); dir != "" {
		tab.screenshot(dir, "portal-phone.png")
	}
	tab.open("/ui/login")
	tab.do("type the admin token", chromedp.SendKeys(chromedp.ID("token"), adminToken))
	tab.submit("sign in", `button[type=submit]`)
	for _, p := range append([]string{"/"}, pages...) {
		tab.open("/ui" + p)
		if n := tab.eval("the width of "+p, `document.documentElement.scrollWidth`); n > 390 {
			t.Errorf("/ui%s is %d px wide at 390 px; wider: %s", p, n, tab.widest())
		}
		if n := tab.eval("the tables of "+p, cutTablesJS); n != 0 {
			t.Errorf("/ui%s has %d tables wider than the screen, which scroll sideways", p, n)
		}
	}
}

// cutTablesJS counts the tables whose content is wider than they are shown.
const cutTablesJS = `[...document.querySelectorAll("table")].filter(t => t.scrollWidth > t.clientWidth + 1).length`

// widest names the elements that end past the viewport's right edge, innermost first.
func (b *chromeTab) widest() string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")]
		.filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest("table"))
		.reverse().slice(0, 5)
		.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().right))
		.join(", ")`))
	if err != nil {
		return err.Error()
	}
	return s
}
