package ui_test

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/hookd/hookd"
)

// framerPage is a customer's page that shows the portal link ?src= in an iframe.
var framerPage = template.Must(template.New("").Parse(`<!doctype html>
<html><body><h1>Customer site</h1><iframe id="portal" src="{{.}}" width="1000" height="700"></iframe></body></html>`))

// newFramer is a customer's site over HTTPS that frames ?src=, reached as https://localhost:PORT:
// another site than the portal's https://127.0.0.1:PORT, so the frame is a cross-site one, in
// which a browser sends only SameSite=None cookies.
func newFramer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = framerPage.Execute(w, r.URL.Query().Get("src"))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return srv, "https://localhost:" + u.Port()
}

// TestPortalFramedInBrowser shows the portal in an iframe of a customer's site in headless
// Chromium, over HTTPS (self-signed certificates, --ignore-certificate-errors): a site that
// --portal-frame-ancestors allows can use the portal in its frame (the link signs in, the pages
// open and a button works, on a SameSite=None, Partitioned cookie); a site it does not allow gets
// no portal in its frame, so no decoy over an invisible frame can press the portal's buttons.
func TestPortalFramedInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("no Chromium at %s (%v): install Debian's chromium (apt-get install chromium) to run this test", chromiumPath, err)
	}
	_, allowed := newFramer(t)
	_, other := newFramer(t)
	s := newSiteWith(t, siteConfig{tls: true, frameAncestors: []string{allowed}})
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	link := func() string {
		token, err := s.auth.IssueAppToken(ctx, s.acme.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s.srv.URL + "/portal?token=" + url.QueryEscape(token)
	}
	tab := newChromeTab(t, allowed, chromedp.IgnoreCertErrors)
	portalApp := s.srv.URL + "/portal/app/" + s.acme.ID

	// The allowed site: the link signs in within the frame and the portal works there.
	tab.openURL(allowed + "/?src=" + url.QueryEscape(link()))
	frame := tab.frameTarget("the allowed site's frame", portalApp)
	if h1 := frame.frameJS("the framed portal", `document.querySelector("h1").textContent`); h1 != `"Acme"` {
		t.Fatalf("the framed portal's heading is %q; want Acme", h1)
	}
	frame.clickTo("open the endpoint in the frame", fmt.Sprintf(`a[href$="/endpoint/%s"]`, ep.ID), "#disable")
	frame.clickTo("disable it in the frame", "#disable", "#enable")
	if got, err := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); err != nil || !got.Disabled {
		t.Fatalf("after Disable in the allowed frame: %+v, %v; want the endpoint disabled", got, err)
	}
	frame.clickTo("enable it again", "#enable", "#disable")

	// Another site: the browser loads the frame but refuses to show the portal in it (an error
	// page stands in its place), so nothing of the portal can be pressed there.
	tab.openURL(other + "/?src=" + url.QueryEscape(link()))
	blocked := tab.frameTarget("the other site's frame", s.srv.URL)
	blocked.waitJS("the other site's frame has loaded", `document.readyState === "complete"`)
	got := blocked.frameJS("the other site's frame", `location.href + " | " +
		document.querySelectorAll("a[href^='/portal/'], form[action^='/portal/']").length + " | " + document.body.innerText.includes("Acme")`)
	if got != `"chrome-error://chromewebdata/ | 0 | false"` {
		t.Errorf("the other site's frame shows %s; want Chromium's error page (chrome-error://chromewebdata/), without the portal's links, forms or application", got)
	}
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); got.Disabled {
		t.Error("the endpoint is disabled")
	}
}

// frameTarget waits for the cross-site iframe whose address starts with prefix (Chromium runs it
// as a target of its own) and returns a tab attached to it.
func (b *chromeTab) frameTarget(what, prefix string) *chromeTab {
	b.t.Helper()
	deadline := time.Now().Add(chromeWaitTimeout)
	for {
		infos, err := chromedp.Targets(b.ctx)
		if err != nil {
			b.fatalf("%s: list the targets: %v", what, err)
		}
		for _, info := range infos {
			if info.Type == "iframe" && strings.HasPrefix(info.URL, prefix) {
				return b.attach(info.TargetID)
			}
		}
		if time.Now().After(deadline) {
			var seen []string
			for _, info := range infos {
				seen = append(seen, info.Type+" "+info.URL)
			}
			b.fatalf("%s: no frame at %s within %v; targets: %q", what, prefix, chromeWaitTimeout, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// attach returns a tab on the target id. Its first action attaches for the life of the context,
// so it takes no timeout of its own: a timer ends the context if the attach hangs.
func (b *chromeTab) attach(id target.ID) *chromeTab {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id))
	b.t.Cleanup(cancel)
	watchdog := time.AfterFunc(chromeStepTimeout, cancel)
	err := chromedp.Do(ctx)
	if !watchdog.Stop() {
		err = fmt.Errorf("not attached within %v: %w", chromeStepTimeout, err)
	}
	if err != nil {
		b.fatalf("attach to the frame: %v", err)
	}
	return &chromeTab{t: b.t, ctx: ctx, base: b.base}
}

// clickTo clicks what sel selects in a frame's target and waits until the page it leads to has
// an element that then selects. It works through the frame's own document (Runtime.evaluate):
// chromedp's page actions wait on a cross-site frame's target for events it does not get.
func (b *chromeTab) clickTo(what, sel, then string) {
	b.t.Helper()
	b.waitJS(what+": wait for "+sel, fmt.Sprintf(`document.readyState === "complete" && document.querySelector(%q) !== null`, sel))
	b.frameJS(what+": click "+sel, fmt.Sprintf(`document.querySelector(%q).click(), true`, sel))
	b.waitJS(what+": wait for "+then, fmt.Sprintf(`document.readyState === "complete" && document.querySelector(%q) !== null`, then))
}

// waitJS evaluates cond in a frame's target until it is true.
func (b *chromeTab) waitJS(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(chromeWaitTimeout)
	for b.frameJSErr(cond) != "true" {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not true within %v: %s", what, chromeWaitTimeout, cond)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// frameJS evaluates js in a frame's target and returns its value as JSON.
func (b *chromeTab) frameJS(what, js string) string {
	b.t.Helper()
	v := b.frameJSErr(js)
	if strings.HasPrefix(v, "error: ") {
		b.t.Fatalf("%s: %s", what, v)
	}
	return v
}

func (b *chromeTab) frameJSErr(js string) string {
	ctx, cancel := context.WithTimeout(b.ctx, chromeStepTimeout)
	defer cancel()
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: js, ReturnByValue: new(true)})
	switch {
	case err != nil:
		return "error: " + err.Error()
	case res.ExceptionDetails != nil:
		return "error: " + res.ExceptionDetails.Text
	case res.Result == nil:
		return "error: no result"
	}
	return string(res.Result.Value)
}
