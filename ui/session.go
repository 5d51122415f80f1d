package ui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// Authenticator is what the pages sign in with (server.TokenAuth): a token checked once opens a
// session, and only the session's id goes in the browser's cookie.
type Authenticator interface {
	server.Authenticator
	// StartSession opens a session of token's principal for ttl (less if the token expires
	// sooner) and returns its id.
	StartSession(ctx context.Context, token string, ttl time.Duration) (string, server.Principal, error)
	// Session returns the principal of an open session; an unknown, expired or ended one, or one
	// whose token stopped working, is an error.
	Session(ctx context.Context, id string) (server.Principal, error)
	// EndSession ends a session; with revokeToken, a portal session's token is revoked too.
	EndSession(ctx context.Context, id string, revokeToken bool) error
}

// ParseFrameAncestors reads the origins allowed to frame the portal: "'none'" (or nothing) for
// none, else origins separated by spaces or commas, each an http(s) scheme and a host with an
// optional port ("https://app.example.com"), the host optionally starting with "*." for its
// subdomains.
func ParseFrameAncestors(s string) ([]string, error) {
	var out []string
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if part == "'none'" {
			continue
		}
		o, err := parseFrameOrigin(part)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func parseFrameOrigin(s string) (string, error) {
	bad := errors.New("use 'none', or origins such as https://app.example.com (scheme and host, no path), separated by spaces or commas")
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Path != "" ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return "", bad
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "*.")
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		name, port = host[:i], host[i+1:]
	}
	if name == "" || strings.ContainsAny(name, "*';\"\\ ") || strings.ContainsAny(port, "*';\"\\ ") {
		return "", bad
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}

// ourOrigin is the scheme and host of the pages as users reach them: the public URL's, else the
// request's (https over TLS, its Host).
func (h *Handler) ourOrigin(r *http.Request) (scheme, host string) {
	if h.public != nil {
		return h.public.Scheme, h.public.Host
	}
	scheme = "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme, r.Host
}

// secure reports whether the pages are reached over HTTPS, so that their cookies are Secure.
func (h *Handler) secure(r *http.Request) bool {
	scheme, _ := h.ourOrigin(r)
	return scheme == "https"
}

// sameOrigin reports whether a POST came from a page of this site: its Origin, or without one its
// Referer, has the pages' scheme and host. A request with neither, or with the opaque origin
// "null" (a sandboxed frame, a redirect from elsewhere), did not.
func (h *Handler) sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" || src == "null" {
		return false
	}
	u, err := url.Parse(src)
	if err != nil {
		return false
	}
	scheme, host := h.ourOrigin(r)
	return u.Scheme == scheme && hostPort(u.Scheme, u.Host) == hostPort(scheme, host)
}

// hostPort is host with the scheme's default port made explicit, in lower case.
func hostPort(scheme, host string) string {
	host = strings.ToLower(host)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		return host
	}
	if scheme == "https" {
		return host + ":443"
	}
	return host + ":80"
}

// setCookie keeps a session's id in its site's cookie, for maxAge seconds (negative: removed).
// The cookies are HttpOnly, Secure over HTTPS, and SameSite=Strict; the portal's is SameSite=None
// and Partitioned instead when it may be framed and is reached over HTTPS, so that it works in an
// iframe on the allowed sites (a browser sends no other cookie to a cross-site frame), where the
// forms' same-origin check stands in for SameSite. A removal carries the same attributes, which a
// browser needs to find a partitioned cookie.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, s site, id string, maxAge int) {
	secure := h.secure(r)
	c := &http.Cookie{Name: s.cookie, Value: id, Path: s.base, HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge}
	if s.portal && secure && len(h.frameAncestors) > 0 {
		c.SameSite, c.Partitioned = http.SameSiteNoneMode, true
	}
	http.SetCookie(w, c)
}

// errWrongSite is a token of the other site: the admin token at the portal, a portal token at
// the dashboard.
var errWrongSite = errors.New("ui: a token of the other site")

// startSession signs the browser in to site s with token and keeps the session in its cookie. A
// token of the other site opens nothing (errWrongSite).
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, s site, token string) (server.Principal, error) {
	pr, err := h.auth.Authenticate(r.Context(), token)
	if err != nil {
		return server.Principal{}, err
	}
	if s.portal != (pr.AppID != "") {
		return server.Principal{}, errWrongSite
	}
	id, pr, err := h.auth.StartSession(r.Context(), token, h.sessionTTL)
	if err != nil {
		return server.Principal{}, err
	}
	h.setCookie(w, r, s, id, int(h.sessionTTL/time.Second))
	return pr, nil
}

// session returns the principal of the browser's session on site s, and the session's id.
func (h *Handler) session(r *http.Request, s site) (server.Principal, string, error) {
	c, err := r.Cookie(s.cookie)
	if err != nil {
		return server.Principal{}, "", err
	}
	pr, err := h.auth.Session(r.Context(), c.Value)
	return pr, c.Value, err
}

// portalSwitch is the answer of the page that asks whether a portal link may replace the
// browser's portal session: a form POST of this site, with the link's token.
func (h *Handler) portalSwitch(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) {
		h.fail(w, r, http.StatusForbidden, "This form came from another site.")
		return
	}
	token := r.PostFormValue("token")
	if pr, err := h.auth.Authenticate(r.Context(), token); err != nil || pr.AppID == "" {
		h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
		return // the session the browser has stays
	}
	if _, id, err := h.session(r, portal); err == nil {
		if err := h.auth.EndSession(r.Context(), id, false); err != nil {
			h.unavailableOr(w, r, err)
			return
		}
	}
	h.enterPortal(w, r, token)
}

// enterPortal opens a portal session with token and sends the browser on to its application,
// without the token in the address.
func (h *Handler) enterPortal(w http.ResponseWriter, r *http.Request, token string) {
	pr, err := h.startSession(w, r, portal, token)
	if err != nil {
		if errors.Is(err, hookd.ErrUnavailable) {
			h.unavailableOr(w, r, err)
			return
		}
		h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
		return
	}
	http.Redirect(w, r, "/portal/app/"+url.PathEscape(pr.AppID), http.StatusSeeOther)
}

// unavailableOr answers a sign-in's failure: 503 while the database cannot be reached, else 500
// (logged).
func (h *Handler) unavailableOr(w http.ResponseWriter, r *http.Request, err error) {
	h.pageError(&req{w: w, r: r, ctx: r.Context()}, err)
}
