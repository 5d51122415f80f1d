// Package ui is hookd's web pages: the operator's dashboard at /ui, signed in with the admin
// token, and the customer portal at /portal, opened with an app-portal token
// (POST /api/v1/auth/app-portal-access/{app}), which shows the same pages limited to that one
// application. Pages are server-rendered html/template with no script; the charts are inline SVG;
// the stylesheet is embedded. Nothing is loaded from elsewhere.
//
// Sign-in puts the token in an HttpOnly, SameSite=Strict cookie scoped to the pages' path; every
// form is a POST that must come from the same origin (the Origin or Referer header), so another
// site cannot drive the buttons.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

//go:embed templates/*.html static/*
var files embed.FS

// Config configures the pages. A nil *Config means every default.
type Config struct {
	// Logger receives the errors the pages show as 500. Default: discard.
	Logger *slog.Logger
	// Now is the clock of the charts and the health figures. Default: time.Now.
	Now func() time.Time
}

// Handler serves /ui/... and /portal/... (mount it at both, or at "/").
type Handler struct {
	client *hookd.Client
	auth   server.Authenticator
	log    *slog.Logger
	now    func() time.Time
	tmpl   *template.Template
	mux    *http.ServeMux
}

// New returns the pages over client; auth checks the tokens (server.TokenAuth).
func New(client *hookd.Client, auth server.Authenticator, cfg *Config) (*Handler, error) {
	if client == nil || auth == nil {
		return nil, errors.New("ui: New needs a client and an authenticator")
	}
	c := Config{}
	if cfg != nil {
		c = *cfg
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	t, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	h := &Handler{client: client, auth: auth, log: c.Logger, now: c.Now, tmpl: t, mux: http.NewServeMux()}
	h.routes()
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The portal may be framed by the operator's own site (an iframe for its customers); the
	// dashboard never is.
	frame := "'none'"
	if r.URL.Path == portal.base || strings.HasPrefix(r.URL.Path, portal.base+"/") {
		frame = "*"
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors "+frame)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// site is one of the two sites: the dashboard or the portal.
type site struct {
	base   string // "/ui" or "/portal"
	cookie string
	portal bool
}

var (
	dashboard = site{base: "/ui", cookie: "hookd_ui", portal: false}
	portal    = site{base: "/portal", cookie: "hookd_portal", portal: true}
)

// req is what a page handler knows of its request.
type req struct {
	site
	w     http.ResponseWriter
	r     *http.Request
	ctx   context.Context
	appID string // the portal's application; empty on the dashboard
	// who is the token's principal: on the portal, whether it is read-only and the feature flags
	// it holds.
	who server.Principal
}

// page is a handler of a signed-in page.
type page func(q *req) error

func (h *Handler) routes() {
	h.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/", http.FileServerFS(files)))
	h.mux.Handle("GET /portal/static/", http.StripPrefix("/portal/", http.FileServerFS(files)))
	h.mux.HandleFunc("GET /ui/login", h.loginForm)
	h.mux.HandleFunc("POST /ui/login", h.login)
	h.mux.HandleFunc("GET /portal", h.portalEnter)
	for _, s := range []site{dashboard, portal} {
		h.mux.HandleFunc("POST "+s.base+"/logout", h.logout(s))
		h.handle(s, "GET "+s.base+"/{$}", h.home)
		h.handle(s, "GET "+s.base+"/app/{app}", h.appPage)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoints", h.addEndpoint)
		h.handle(s, "POST "+s.base+"/app/{app}/send", h.sendExample)
		h.handle(s, "GET "+s.base+"/app/{app}/endpoint/{ep}", h.endpointPage)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoint/{ep}/{action}", h.endpointAction)
		h.handle(s, "GET "+s.base+"/app/{app}/msg/{msg}", h.messagePage)
		h.handle(s, "POST "+s.base+"/app/{app}/msg/{msg}/resend/{ep}", h.resend)
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "No such page.")
	})
}

// handle registers a page of site s: signed in, same-origin for POST, limited to the portal's
// application.
func (h *Handler) handle(s site, pattern string, p page) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		q := &req{site: s, w: w, r: r, ctx: r.Context()}
		c, err := r.Cookie(s.cookie)
		var pr server.Principal
		if err == nil {
			pr, err = h.auth.Authenticate(r.Context(), c.Value)
		}
		if err != nil || (!s.portal && pr.AppID != "") || (s.portal && pr.AppID == "") {
			if s.portal {
				h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
				return
			}
			next := r.URL.Path
			if r.Method != http.MethodGet { // a form: come back to the page it was on
				next = "/ui/"
				if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && ref.Host == r.Host {
					next = ref.Path
				}
			}
			http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		q.appID, q.who = pr.AppID, pr
		if r.Method == http.MethodPost && !sameOrigin(r) {
			h.fail(w, r, http.StatusForbidden, "This form came from another site.")
			return
		}
		if r.Method == http.MethodPost && pr.ReadOnly {
			h.fail(w, r, http.StatusForbidden, "This portal link is read-only: it shows the application and changes nothing.")
			return
		}
		if app := r.PathValue("app"); s.portal && app != "" && app != q.appID {
			h.fail(w, r, http.StatusForbidden, "This page belongs to another application.")
			return
		}
		if err := p(q); err != nil {
			h.pageError(q, err)
		}
	})
}

// sameOrigin reports whether a POST came from a page of this host.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" || src == "null" {
		src = r.Header.Get("Referer")
	}
	u, err := url.Parse(src)
	return err == nil && u.Host == r.Host
}

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "login", map[string]any{"Next": safeNext(r.URL.Query().Get("next")), "Error": ""})
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		h.fail(w, r, http.StatusForbidden, "This form came from another site.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	pr, err := h.auth.Authenticate(r.Context(), token)
	if err != nil || pr.AppID != "" {
		h.render(w, r, http.StatusUnauthorized, "login", map[string]any{"Next": next, "Error": "That is not the admin token."})
		return
	}
	setCookie(w, r, dashboard, token)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a redirect target on the dashboard.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.HasPrefix(next, "//") {
		return "/ui/"
	}
	return next
}

// portalEnter takes the token of a portal link, keeps it in the portal's cookie, and sends the
// browser on to its application without the token in the address.
func (h *Handler) portalEnter(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token == "" {
		if c, err := r.Cookie(portal.cookie); err == nil {
			token = c.Value
		}
	}
	pr, err := h.auth.Authenticate(r.Context(), token)
	if err != nil || pr.AppID == "" {
		h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
		return
	}
	setCookie(w, r, portal, token)
	http.Redirect(w, r, "/portal/app/"+url.PathEscape(pr.AppID), http.StatusSeeOther)
}

// setCookie keeps a site's token in its cookie. The dashboard's is SameSite=Strict. The portal's,
// over HTTPS, is SameSite=None and partitioned, so that the portal works in an iframe on the
// operator's site (browsers send no other cookie there); the forms' same-origin check stands in
// for SameSite. Over plain HTTP it is Strict too, and an iframe on another site cannot sign in.
func setCookie(w http.ResponseWriter, r *http.Request, s site, token string) {
	c := &http.Cookie{Name: s.cookie, Value: token, Path: s.base, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int((12 * time.Hour).Seconds())}
	if s.portal && r.TLS != nil {
		c.SameSite, c.Partitioned = http.SameSiteNoneMode, true
	}
	http.SetCookie(w, c)
}

func (h *Handler) logout(s site) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: "", Path: s.base, HttpOnly: true, MaxAge: -1, SameSite: http.SameSiteStrictMode})
		if s.portal {
			h.fail(w, r, http.StatusOK, "Signed out.")
			return
		}
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	}
}

// home lists the applications (the dashboard), or opens the portal's own.
func (h *Handler) home(q *req) error {
	if q.portal {
		http.Redirect(q.w, q.r, q.base+"/app/"+url.PathEscape(q.appID), http.StatusSeeOther)
		return nil
	}
	opts := listOptions(q.r)
	page, err := h.client.ListApplications(q.ctx, opts)
	if err != nil {
		return err
	}
	h.render(q.w, q.r, http.StatusOK, "apps", q.data(map[string]any{"Apps": page, "Title": "Applications"}))
	return nil
}

// listOptions reads a page's cursor from the query.
func listOptions(r *http.Request) hookd.ListOptions {
	o := hookd.ListOptions{Limit: 20, Iterator: r.URL.Query().Get("after")}
	if b := r.URL.Query().Get("before"); b != "" {
		o.Iterator, o.Backward = b, true
	}
	return o
}

// data adds what every page shows to d. ReadOnly pages show no form that writes.
func (q *req) data(d map[string]any) map[string]any {
	d["Base"], d["Portal"], d["ReadOnly"] = q.base, q.portal, q.who.ReadOnly
	return d
}

// pageError shows err as the page: a missing thing as 404, bad input as 400, a conflict or a
// disabled endpoint as 409, a database that cannot be reached as 503 (logged), the rest as 500
// (logged).
func (h *Handler) pageError(q *req, err error) {
	var ve *hookd.ValidationError
	switch {
	case errors.Is(err, hookd.ErrNotFound):
		h.fail(q.w, q.r, http.StatusNotFound, "Not found: it may have been deleted.")
	case errors.As(err, &ve):
		h.fail(q.w, q.r, http.StatusBadRequest, fmt.Sprintf("%s: %s", ve.Field, ve.Reason))
	case errors.Is(err, hookd.ErrConflict):
		h.fail(q.w, q.r, http.StatusConflict, "That conflicts with what exists: "+err.Error())
	case errors.Is(err, hookd.ErrEndpointDisabled):
		h.fail(q.w, q.r, http.StatusConflict, "That endpoint is disabled: enable it, then try again.")
	default:
		h.log.LogAttrs(q.ctx, slog.LevelError, "hookd ui: page failed", slog.String("path", q.r.URL.Path), slog.String("error", err.Error()))
		if errors.Is(err, hookd.ErrUnavailable) {
			q.w.Header().Set("Retry-After", "1")
			h.fail(q.w, q.r, http.StatusServiceUnavailable, "The database cannot be reached just now, so nothing was read or changed. Try again in a moment.")
			return
		}
		h.fail(q.w, q.r, http.StatusInternalServerError, "Something went wrong; the server's log says what.")
	}
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	base, isPortal := "", false
	if r.URL.Path == portal.base || strings.HasPrefix(r.URL.Path, portal.base+"/") {
		base, isPortal = portal.base, true
	}
	h.render(w, r, code, "message", map[string]any{"Code": code, "Message": msg, "Base": base, "Portal": isPortal, "SignedOut": true})
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, name string, data map[string]any) {
	var b strings.Builder
	if err := h.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "hookd ui: template failed", slog.String("template", name), slog.String("error", err.Error()))
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, b.String())
}
