// Package ui is hookd's web pages: the operator's dashboard at /ui, signed in with the admin
// token, and the customer portal at /portal, opened with an app-portal token
// (POST /api/v1/auth/app-portal-access/{app}), which shows the same pages limited to that one
// application. Pages are server-rendered html/template; one small embedded script (static/pages.js,
// allowed by CSP script-src 'self' alone) copies ids and payloads to the clipboard and reloads the
// lists while they are shown; the charts are inline SVG; the stylesheet is embedded. Nothing is
// loaded from elsewhere but an operator's portal logo (Config.PortalLogoURL).
//
// Sign-in checks the token and opens a session (server.DefaultSessionTTL by default); only the
// session's random id goes in an HttpOnly, SameSite=Strict cookie scoped to the pages' path (the
// portal's, when it may be framed over HTTPS, SameSite=None and Partitioned), and signing out ends
// the session (and, at the portal, revokes the link's token). Every form, sign-in
// and sign-outs included, is a POST that must come from the pages' own origin (scheme and host, by
// the Origin or Referer header), so another site cannot drive the buttons. The dashboard is never
// framed; the portal only by the sites Config.PortalFrameAncestors names.
package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
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
	// PublicURL is the address users reach the pages at (server.ParsePublicURL), e.g. behind a
	// TLS proxy. Forms must come from its origin, and with https the cookies are Secure. Default:
	// the request's own origin (https over TLS, its Host).
	PublicURL string
	// PortalFrameAncestors are the origins allowed to show the portal in an iframe
	// (ParseFrameAncestors), e.g. "https://app.example.com": they go in the portal's CSP
	// frame-ancestors, and over HTTPS the portal's cookie works in their frames. Default: none,
	// with X-Frame-Options: DENY.
	PortalFrameAncestors []string
	// SessionTTL is how long a sign-in lasts. Default: server.DefaultSessionTTL.
	SessionTTL time.Duration
	// PortalTitle names the portal in its header and its pages' titles (ParsePortalTitle).
	// Default: "Webhooks".
	PortalTitle string
	// PortalLogoURL is an image shown in the portal's header: an https URL, whose origin the
	// portal's CSP img-src then allows, or a path on this server (ParsePortalLogoURL). Default:
	// none.
	PortalLogoURL string
	// PortalAccent is the portal's accent colour, #rrggbb (ParsePortalAccent). Default: the
	// dashboard's blue.
	PortalAccent string
}

// DefaultPortalTitle is the portal's title when Config.PortalTitle is empty.
const DefaultPortalTitle = "Webhooks"

// Handler serves /ui/... and /portal/... (mount it at both, or at "/").
type Handler struct {
	client *hookd.Client
	auth   Authenticator
	log    *slog.Logger
	now    func() time.Time
	tmpl   *template.Template
	mux    *http.ServeMux

	public         *url.URL // Config.PublicURL parsed; nil without one
	frameAncestors []string
	portalFraming  string // the portal's CSP frame-ancestors sources
	sessionTTL     time.Duration
	brand          brand  // the portal's title, logo and accent
	portalImg      string // the portal's CSP img-src sources
}

// New returns the pages over client; auth checks the tokens and keeps the sessions
// (server.TokenAuth).
func New(client *hookd.Client, auth Authenticator, cfg *Config) (*Handler, error) {
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
	if c.SessionTTL <= 0 {
		c.SessionTTL = server.DefaultSessionTTL
	}
	var public *url.URL
	if c.PublicURL != "" {
		u, err := server.ParsePublicURL(c.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("ui: PublicURL %q: %w", c.PublicURL, err)
		}
		public = u
	}
	ancestors, err := ParseFrameAncestors(strings.Join(c.PortalFrameAncestors, " "))
	if err != nil {
		return nil, fmt.Errorf("ui: PortalFrameAncestors: %w", err)
	}
	framing := "'none'"
	if len(ancestors) > 0 {
		framing = strings.Join(ancestors, " ")
	}
	var b brand
	if b.Title, err = ParsePortalTitle(c.PortalTitle); err != nil {
		return nil, fmt.Errorf("ui: PortalTitle: %w", err)
	}
	if b.Title == "" {
		b.Title = DefaultPortalTitle
	}
	if b.Logo, err = ParsePortalLogoURL(c.PortalLogoURL); err != nil {
		return nil, fmt.Errorf("ui: PortalLogoURL %q: %w", c.PortalLogoURL, err)
	}
	if b.Accent, err = ParsePortalAccent(c.PortalAccent); err != nil {
		return nil, fmt.Errorf("ui: PortalAccent %q: %w", c.PortalAccent, err)
	}
	img := "'self' data:"
	if o := logoOrigin(b.Logo); o != "" {
		img += " " + o
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, fmt.Errorf("ui: templates: %w", err)
	}
	h := &Handler{client: client, auth: auth, log: c.Logger, now: c.Now, tmpl: t, mux: http.NewServeMux(),
		public: public, frameAncestors: ancestors, portalFraming: framing, sessionTTL: c.SessionTTL,
		brand: b, portalImg: img}
	h.routes()
	return h, nil
}

// parseTemplates reads the pages' embedded templates.
func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The portal may be framed by the sites the operator names (an iframe for its customers); the
	// dashboard never is. X-Frame-Options is for browsers without CSP's frame-ancestors.
	// The portal's images may come from the operator's logo's origin too.
	frame, img := "'none'", "'self' data:"
	if r.URL.Path == portal.base || strings.HasPrefix(r.URL.Path, portal.base+"/") {
		frame, img = h.portalFraming, h.portalImg
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src "+img+"; form-action 'self'; base-uri 'none'; frame-ancestors "+frame)
	if frame == "'none'" {
		w.Header().Set("X-Frame-Options", "DENY")
	}
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
	h.mux.HandleFunc("GET /portal/theme.css", h.portalTheme)
	h.mux.HandleFunc("GET /ui/login", h.loginForm)
	h.mux.HandleFunc("POST /ui/login", h.login)
	h.mux.HandleFunc("GET /portal", h.portalEnter)
	h.mux.HandleFunc("POST /portal", h.portalSwitch)
	for _, s := range []site{dashboard, portal} {
		h.mux.HandleFunc("POST "+s.base+"/logout", h.logout(s))
		h.handle(s, "GET "+s.base+"/{$}", h.home)
		h.handle(s, "GET "+s.base+"/app/{app}", h.appPage)
		h.handle(s, "GET "+s.base+"/app/{app}/find", h.find)
		h.handle(s, "GET "+s.base+"/app/{app}/event-types", h.eventTypesPage)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoints", h.addEndpoint)
		h.handle(s, "POST "+s.base+"/app/{app}/send", h.sendExample)
		h.handle(s, "GET "+s.base+"/app/{app}/endpoint/{ep}", h.endpointPage)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoint/{ep}/{action}", h.endpointAction)
		h.handle(s, "GET "+s.base+"/app/{app}/endpoint/{ep}/edit", h.editEndpointForm)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoint/{ep}/edit", h.editEndpoint)
		h.handle(s, "GET "+s.base+"/app/{app}/endpoint/{ep}/delete", h.deleteEndpointForm)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoint/{ep}/delete", h.deleteEndpoint)
		h.handle(s, "POST "+s.base+"/app/{app}/endpoint/{ep}/test", h.sendTestEvent)
		h.handle(s, "GET "+s.base+"/app/{app}/msg/{msg}", h.messagePage)
		h.handle(s, "GET "+s.base+"/app/{app}/msg/{msg}/payload", h.payloadFile)
		h.handle(s, "GET "+s.base+"/app/{app}/msg/{msg}/attempt/{attempt}", h.attemptPage)
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
		pr, _, err := h.session(r, s)
		if errors.Is(err, hookd.ErrUnavailable) {
			h.pageError(q, err)
			return
		}
		if err != nil || (!s.portal && pr.AppID != "") || (s.portal && pr.AppID == "") {
			if s.portal {
				h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
				return
			}
			next := r.URL.Path
			if r.Method != http.MethodGet { // a form: come back to the page it was on
				next = "/ui/"
				if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && h.sameOrigin(r) {
					next = ref.Path
				}
			}
			http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		q.appID, q.who = pr.AppID, pr
		if r.Method == http.MethodPost && !h.sameOrigin(r) {
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

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "login", map[string]any{"Next": safeNext(r.URL.Query().Get("next")), "Error": ""})
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) {
		h.fail(w, r, http.StatusForbidden, "This form came from another site.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if _, err := h.startSession(w, r, dashboard, token); err != nil {
		if errors.Is(err, hookd.ErrUnavailable) {
			h.unavailableOr(w, r, err)
			return
		}
		h.render(w, r, http.StatusUnauthorized, "login", map[string]any{"Next": next, "Error": "That is not the admin token."})
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a redirect target on the dashboard.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.HasPrefix(next, "//") {
		return "/ui/"
	}
	return next
}

// portalEnter opens a portal link: its token opens a session (enterPortal). A browser already
// signed in to the portal of another application is asked first (a page with a form that
// switches), so that a link from elsewhere does not quietly replace the session it has; a link
// of the same application replaces it. Without a token, the session's application opens.
func (h *Handler) portalEnter(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	cur, id, curErr := h.session(r, portal)
	if token == "" {
		if curErr != nil || cur.AppID == "" {
			h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
			return
		}
		http.Redirect(w, r, "/portal/app/"+url.PathEscape(cur.AppID), http.StatusSeeOther)
		return
	}
	if curErr == nil && cur.AppID != "" {
		next, err := h.auth.Authenticate(r.Context(), token)
		if err != nil || next.AppID == "" {
			h.fail(w, r, http.StatusUnauthorized, "This portal link has expired or is not valid. Ask for a new one.")
			return
		}
		if next.AppID != cur.AppID {
			h.askSwitch(w, r, cur.AppID, token)
			return
		}
		if err := h.auth.EndSession(r.Context(), id, false); err != nil {
			h.unavailableOr(w, r, err)
			return
		}
	}
	h.enterPortal(w, r, token)
}

// askSwitch shows the page that asks whether to leave the portal of appID for the link's.
func (h *Handler) askSwitch(w http.ResponseWriter, r *http.Request, appID, token string) {
	name := appID
	if app, err := h.client.GetApplication(r.Context(), appID); err == nil {
		name = app.Name
	}
	h.render(w, r, http.StatusOK, "switch", map[string]any{"Base": portal.base, "Portal": true, "Current": name,
		"CurrentID": appID, "Token": token, "Title": "Open another portal?"})
}

// logout ends the browser's session of site s (same-origin POST only); at the portal it revokes
// the link's token too, so that the link and every session opened with it stop working.
func (h *Handler) logout(s site) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.sameOrigin(r) {
			h.fail(w, r, http.StatusForbidden, "This form came from another site.")
			return
		}
		if c, err := r.Cookie(s.cookie); err == nil {
			if err := h.auth.EndSession(r.Context(), c.Value, s.portal); err != nil {
				h.unavailableOr(w, r, err)
				return
			}
		}
		h.setCookie(w, r, s, "", -1)
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
	// hookd's own application (its operational webhooks) is shown apart from the customers'.
	var customers, own []hookd.Application
	for _, a := range page.Data {
		if a.UID == hookd.OperationalAppUID {
			own = append(own, a)
		} else {
			customers = append(customers, a)
		}
	}
	h.render(q.w, q.r, http.StatusOK, "apps", q.data(map[string]any{"Apps": page, "Customers": customers, "Own": own, "Title": "Applications"}))
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
// disabled endpoint as 409, a quota reached as 422 (endpoints) or 429 (messages), a database that
// cannot be reached as 503 (logged), the rest as 500 (logged).
func (h *Handler) pageError(q *req, err error) {
	var ve *hookd.ValidationError
	var el *hookd.EndpointLimitError
	var rl *hookd.RateLimitError
	switch {
	case errors.As(err, &el):
		h.fail(q.w, q.r, http.StatusUnprocessableEntity, fmt.Sprintf("This application has %d endpoints, the most it may have: delete one first.", el.Max))
	case errors.As(err, &rl):
		q.w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(rl.RetryAfter.Seconds()))))
		h.fail(q.w, q.r, http.StatusTooManyRequests, fmt.Sprintf("This application sends more than %g messages a second, so nothing was sent. Try again in a moment.", rl.Rate))
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
	data["Brand"] = h.brand // the portal's header shows it
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
