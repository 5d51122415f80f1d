// Package server is hookd's HTTP API: the open-source Svix server's API, so that the official Svix
// SDKs work against hookd by changing their base URL. It is an http.Handler over a *hookd.Client.
//
// Two generations of the API are spoken. Svix renamed fields between the server the Go SDK
// v1.44.0 was generated from (filterTypes, rateLimit) and today's (eventTypes, throttleRate), and
// the Go SDK up to v1.56.x rejects any response field it does not know. Input accepts both names
// of a renamed field. Output is what Svix's server writes, both names included, for every client
// but those Go SDKs, told apart by the User-Agent the Svix SDKs send
// (svix-libs/<version>/<language>): they get exactly the 1.44 shapes (generation.go).
//
// Every route but the health checks needs a bearer token: the admin token (the operator's, every
// application) or an app-portal token (one application's, minted by
// POST /api/v1/auth/app-portal-access/{app_id}). Every handler under /api/v1/app/{app_id} resolves
// the application by id or uid and then calls rc.appAllowed(app.ID) (s.resolveApp does both):
// another application is 403. Routes an app-portal token may never use (list, create, replace,
// patch or delete applications, write event types, mint tokens) call rc.requireAdmin() first:
// 403. A read-only app-portal token is refused every route that changes something or sends, and
// the endpoint secrets, before its handler runs (accessOf): 403. An app-portal token sees the
// event types without a feature flag and those gated by a flag it holds (Principal.SeesEventType).
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/outage"
	"github.com/hookd/hookd/internal/route"
)

// Config configures a Server. nil or zero fields mean the defaults.
type Config struct {
	// Auth checks bearer tokens. Required.
	Auth Authenticator
	// MaxBody bounds a request body in bytes (413 above it). Default: 1 MiB plus 64 KiB, so that
	// a payload at hookd.Config.MaxPayload fits with its envelope.
	MaxBody int64
	// Logger receives one line per request at Debug and errors at Error. Default: discard.
	Logger *slog.Logger
	// PublicURL is the address users reach the server at (ParsePublicURL), e.g. behind a TLS
	// proxy; the portal links of app-portal-access are built on it. Default: the address of the
	// listener the request came in on, never the request's Host header.
	PublicURL string
}

// Server is the HTTP API.
type Server struct {
	client *hookd.Client
	cfg    Config
	mux    *http.ServeMux
	idem   keyLocks // one lock per Idempotency-Key in flight
	// publicURL is Config.PublicURL parsed; nil without one.
	publicURL *url.URL
	// patterns are the routes registered, "METHOD /path/{param}", in order (for the tests).
	patterns []string
	healthz  *Health // GET /api/v1/health (health_handlers.go)
	// unavailable logs the requests refused because the database is unavailable as one outage
	// (package outage), not a line each: clients retry, and an outage would flood the log.
	unavailable *outage.Cause
}

// New returns the API over client.
func New(client *hookd.Client, cfg *Config) (*Server, error) {
	c := cfg.withDefaults()
	if c.Auth == nil {
		return nil, errMissingAuth
	}
	s := &Server{client: client, cfg: c, mux: http.NewServeMux(), healthz: NewHealth(client, c.Logger),
		unavailable: outage.New(c.Logger, nil).Cause("API: database unavailable")}
	if c.PublicURL != "" {
		u, err := ParsePublicURL(c.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("server: PublicURL %q: %w", c.PublicURL, err)
		}
		s.publicURL = u
	}
	s.routes()
	return s, nil
}

// ServeHTTP serves the API. A trailing slash is ignored, as Svix does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimRight(p, "/")
		r = r2
	}
	s.mux.ServeHTTP(w, r)
}

// handlerFunc is an API handler: it writes a response, or returns an error that the server turns
// into the right status and a JSON body (see writeError).
type handlerFunc func(w http.ResponseWriter, r *http.Request, rc *reqCtx) error

// reqCtx is what every handler knows about its request.
type reqCtx struct {
	gen       generation
	principal Principal
}

// handle registers rt's pattern ("GET /api/v1/app/{app_id}") with authentication (for an authed
// route), the read-only check (accessOf), the body limit, the generation, panic recovery, error
// mapping and, for a POST with an Idempotency-Key, the replay of its first response.
func (s *Server) handle(rt apiRoute) {
	pattern, h := rt.pattern, rt.handler
	s.patterns = append(s.patterns, pattern)
	s.mux.HandleFunc(pattern, func(rw http.ResponseWriter, r *http.Request) {
		route.Note(r) // for metrics.Instrument: the pattern, never the path, labels the request
		w := &statusWriter{ResponseWriter: rw}
		began := time.Now()
		defer func() {
			if v := recover(); v != nil {
				s.cfg.Logger.Error("panic in handler", "pattern", pattern, "panic", v)
				writeError(w, errInternal)
			}
			// The path only: a query or a header could hold a token. Built only when Debug is on:
			// every API call passes here.
			if s.cfg.Logger.Enabled(r.Context(), slog.LevelDebug) {
				s.cfg.Logger.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("method", r.Method),
					slog.String("path", r.URL.Path), slog.Int("status", w.status), slog.Duration("duration", time.Since(began)))
			}
		}()
		rc := &reqCtx{gen: generationOf(r)}
		if rt.kind == authed {
			p, err := s.cfg.Auth.Authenticate(r.Context(), bearer(r))
			if err != nil {
				s.fail(w, r, err)
				return
			}
			rc.principal = p
		}
		if rc.principal.ReadOnly && accessOf(pattern) != reads {
			s.fail(w, r, errReadOnly)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		}
		serve := func(w http.ResponseWriter) {
			if err := h(w, r, rc); err != nil {
				s.fail(w, r, err)
			}
		}
		s.idempotent(w, r, rc, serve) // a POST with Idempotency-Key: idempotency.go
		if w.status < http.StatusInternalServerError && accessOf(pattern) != reads {
			s.unavailable.OK() // a write went through: reads answer on a full disk too
		}
	})
}

// fail answers err (see writeError), logging it first when it is the server's fault rather than
// the caller's: a request refused because the database is unavailable as part of an outage, any
// other one a line each.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, hookd.ErrUnavailable), errors.Is(err, hookd.ErrWriterBusy):
		s.unavailable.Fail(err, slog.String("method", r.Method), slog.String("path", r.URL.Path))
	case isInternal(err):
		s.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	writeError(w, err)
}

// statusWriter remembers the status a handler wrote, for the request's log line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Principal is who a token speaks for: the operator (AppID empty) or one application's portal.
type Principal struct {
	AppID string // empty: admin, every application
	// ReadOnly refuses the token every route that changes something or sends, and the endpoint
	// secrets (see accessOf). App-portal tokens only.
	ReadOnly bool
	// FeatureFlags are the flags an app-portal token holds: it sees the event types gated by any of
	// them (see SeesEventType).
	FeatureFlags []string
}

// SeesEventType reports whether the principal may see et. The admin sees every event type; an
// app-portal token sees one without feature flags, or one whose flags include a flag it holds, as
// Svix's server filters event types by the token's flags.
func (p Principal) SeesEventType(et *hookd.EventType) bool {
	flags := et.Flags()
	if p.AppID == "" || len(flags) == 0 {
		return true
	}
	for _, f := range flags {
		if slices.Contains(p.FeatureFlags, f) {
			return true
		}
	}
	return false
}

// Authenticator checks a bearer token. It returns errUnauthorized (401) for a missing or unknown
// token.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (Principal, error)
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// appAllowed returns errForbidden unless the principal may act on the application with id appID.
func (rc *reqCtx) appAllowed(appID string) error {
	if rc.principal.AppID != "" && rc.principal.AppID != appID {
		return errForbidden
	}
	return nil
}

func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.MaxBody == 0 {
		out.MaxBody = 1<<20 + 64<<10
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out
}
