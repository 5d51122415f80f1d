package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// maxPortalTitle bounds the portal's title, in characters.
const maxPortalTitle = 80

// ParsePortalTitle checks the portal's title: at most 80 characters, no control characters.
// Surrounding spaces are dropped.
func ParsePortalTitle(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len([]rune(s)) > maxPortalTitle {
		return "", fmt.Errorf("use at most %d characters", maxPortalTitle)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", errors.New("use printable characters only")
	}
	return s, nil
}

// ParsePortalLogoURL checks the portal's logo: an https URL (https://cdn.example.com/logo.svg)
// or a path on this server (/assets/logo.png); "" is none.
func ParsePortalLogoURL(s string) (string, error) {
	bad := errors.New("use an https URL such as https://cdn.example.com/logo.svg, or a path on this server such as /assets/logo.png")
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if strings.ContainsAny(s, " \t\r\n\"'<>\\;") {
		return "", bad
	}
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return "", bad
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
	default:
		return "", bad
	}
	return u.String(), nil
}

var accentRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ParsePortalAccent checks the portal's accent colour: #rrggbb, e.g. #0a7d5a; "" is hookd's.
func ParsePortalAccent(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if !accentRE.MatchString(s) {
		return "", errors.New("use a colour as #rrggbb, e.g. #0a7d5a")
	}
	return strings.ToLower(s), nil
}

// logoOrigin is the origin of an https logo URL, for the portal's CSP img-src; "" for a path
// (already 'self') or no logo.
func logoOrigin(logo string) string {
	u, err := url.Parse(logo)
	if err != nil || u.Scheme != "https" {
		return ""
	}
	return "https://" + u.Host
}

// portalTheme serves the portal's stylesheet of the operator's accent colour, linked after the
// pages' own (CSP style-src 'self' allows no inline style).
func (h *Handler) portalTheme(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if h.brand.Accent != "" { // checked by ParsePortalAccent: #rrggbb
		fmt.Fprintf(w, ":root { --accent: %s; }\nheader { border-bottom: 3px solid %s; }\n", h.brand.Accent, h.brand.Accent)
	}
}

// brand is how the portal presents itself (Config.PortalTitle and the rest, checked).
type brand struct {
	Title, Logo, Accent string
}
