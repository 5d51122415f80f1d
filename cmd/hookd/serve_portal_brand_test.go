package main

import (
	"strings"
	"testing"
)

// The portal's title, logo and accent flags refuse what could break out of the page, its CSS or
// its CSP, and come from the environment too.
func TestServePortalBrandValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--portal-accent", "red"}, `--portal-accent "red": use a colour as #rrggbb`},
		{[]string{"--portal-accent", "#123456; } body { display: none"}, `--portal-accent`},
		{[]string{"--portal-logo-url", "http://cdn.example.com/logo.png"}, `--portal-logo-url "http://cdn.example.com/logo.png": use an https URL`},
		{[]string{"--portal-logo-url", "https://cdn.example.com/a.png; script-src *"}, `--portal-logo-url`},
		{[]string{"--portal-logo-url", "//cdn.example.com/logo.png"}, `--portal-logo-url`},
		{[]string{"--portal-title", strings.Repeat("x", 81)}, `--portal-title`},
	} {
		r := run(t, "", append([]string{"serve"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("serve %q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	c, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		v, ok := map[string]string{"HOOKD_PORTAL_TITLE": " Acme Webhooks ", "HOOKD_PORTAL_LOGO_URL": "https://cdn.example.com/logo.svg",
			"HOOKD_PORTAL_ACCENT": "#0A7D5A"}[k]
		return v, ok
	})
	if err != nil || c.portalTitle != "Acme Webhooks" || c.portalLogo != "https://cdn.example.com/logo.svg" || c.portalAccent != "#0a7d5a" {
		t.Errorf("from the environment: title %q, logo %q, accent %q, %v", c.portalTitle, c.portalLogo, c.portalAccent, err)
	}
}
