package ui_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/ui"
)

// TestPortalBranding: the portal shows the operator's title, logo and accent; its CSP allows the
// logo's origin only when one is set, and the dashboard's never; the portal says "hookd" nowhere.
func TestPortalBranding(t *testing.T) {
	s := newSiteWith(t, siteConfig{portalTitle: "Acme Webhooks", portalLogo: "https://cdn.example.com/logo.svg", portalAccent: "#0A7D5A"})
	c := s.openPortal(t, s.portalToken(t, server.Principal{ReadOnly: true}))
	resp, err := c.Get(s.srv.URL + "/portal/app/" + s.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	for _, want := range []string{`<img src="https://cdn.example.com/logo.svg" alt="" class="logo">Acme Webhooks</a>`,
		`<title>Acme · Acme Webhooks</title>`, `<link rel="stylesheet" href="/portal/theme.css">`} {
		if !strings.Contains(body, want) {
			t.Errorf("the portal does not show %q:\n%s", want, body)
		}
	}
	if strings.Contains(strings.ToLower(body), "hookd") {
		t.Errorf("the portal names hookd:\n%s", body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: https://cdn.example.com;") {
		t.Errorf("the portal's CSP %q does not allow the logo's origin", csp)
	}
	if code, _, css := get(t, c, s.srv.URL+"/portal/theme.css"); code != http.StatusOK || !strings.Contains(css, "--accent: #0a7d5a;") {
		t.Errorf("the portal's theme: %d %q", code, css)
	}
	dash, err := http.Get(s.srv.URL + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	dash.Body.Close()
	if csp := dash.Header.Get("Content-Security-Policy"); strings.Contains(csp, "cdn.example.com") {
		t.Errorf("the dashboard's CSP %q allows the portal's logo origin", csp)
	}

	plain := newSite(t, false)
	pc := plain.openPortal(t, plain.portalToken(t, server.Principal{ReadOnly: true}))
	resp, err = pc.Get(plain.srv.URL + "/portal/app/" + plain.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data:;") {
		t.Errorf("without a logo the portal's CSP is %q; want img-src 'self' data: alone", csp)
	}
}

func TestPortalBrandValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		parse func(string) (string, error)
		in    string
		want  string // "" for an error
	}{
		{"accent", ui.ParsePortalAccent, "#0A7D5A", "#0a7d5a"},
		{"accent empty", ui.ParsePortalAccent, "", ""},
		{"accent named", ui.ParsePortalAccent, "red", "!"},
		{"accent short", ui.ParsePortalAccent, "#fff", "!"},
		{"accent injection", ui.ParsePortalAccent, "#000000;}*{x:y", "!"},
		{"logo https", ui.ParsePortalLogoURL, "https://cdn.example.com/l.svg", "https://cdn.example.com/l.svg"},
		{"logo path", ui.ParsePortalLogoURL, "/assets/logo.png", "/assets/logo.png"},
		{"logo http", ui.ParsePortalLogoURL, "http://cdn.example.com/l.svg", "!"},
		{"logo scheme-relative", ui.ParsePortalLogoURL, "//cdn.example.com/l.svg", "!"},
		{"logo javascript", ui.ParsePortalLogoURL, "javascript:alert(1)", "!"},
		{"logo quote", ui.ParsePortalLogoURL, `https://cdn.example.com/"onerror=x`, "!"},
		{"logo csp", ui.ParsePortalLogoURL, "https://a.example; script-src *", "!"},
		{"title", ui.ParsePortalTitle, " Acme ", "Acme"},
		{"title control", ui.ParsePortalTitle, "A\x00B", "!"},
		{"title long", ui.ParsePortalTitle, strings.Repeat("é", 81), "!"},
	} {
		got, err := tc.parse(tc.in)
		if tc.want == "!" {
			if err == nil {
				t.Errorf("%s: %q accepted as %q", tc.name, tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q → %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		}
	}
}
