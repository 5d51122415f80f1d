package server

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hookd/hookd"
)

// App-portal token lifetimes: AppPortalAccessIn.expiry is in seconds, from one hour to seven days,
// seven days when absent (the Svix SDKs' documented range).
const (
	minPortalTTL     = time.Hour
	maxPortalTTL     = 7 * 24 * time.Hour
	defaultPortalTTL = maxPortalTTL
)

var (
	errAdminOnly = &apiError{http.StatusForbidden, "insufficient_access", "This operation needs the admin token; an app-portal token may not do it."}
	errNoIssuer  = &apiError{http.StatusNotImplemented, "not_implemented", "This server's authenticator cannot mint or revoke tokens."}
)

// requireAdmin refuses app-portal tokens.
func (rc *reqCtx) requireAdmin() error {
	if rc.principal.AppID != "" {
		return errAdminOnly
	}
	return nil
}

// appPortalAccessIn is AppPortalAccessIn of both specs and of the Go SDK v1.44.0. The token holds
// featureFlags (it sees the event types gated by them) and, with readOnly true, may read but not
// write, send, or read an endpoint's secret (Svix Cloud's read-only portal).
type appPortalAccessIn struct {
	Application  *applicationIn `json:"application"`
	Expiry       *int64         `json:"expiry"`
	FeatureFlags []string       `json:"featureFlags"`
	ReadOnly     *bool          `json:"readOnly"`
}

// accessOut is AppPortalAccessOut and DashboardAccessOut (the same two fields).
type accessOut struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// appPortalAccess mints an app-portal token for the application (admin only). When the
// application does not exist and the body has an "application", it is created first; that
// application's uid must be given and be the path's, as in Svix (a 422 on application.uid
// otherwise). The inline application is checked whether or not it is needed, and ignored when
// the path's application exists.
func (s *Server) appPortalAccess(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	ref, err := appPathParam(r)
	if err != nil {
		return err
	}
	var in appPortalAccessIn
	if err := decodeOptionalBody(r, &in); err != nil {
		return err
	}
	ttl := defaultPortalTTL
	if in.Expiry != nil {
		if *in.Expiry < int64(minPortalTTL/time.Second) || *in.Expiry > int64(maxPortalTTL/time.Second) {
			return invalidField("body", "expiry", "must be from 3600 (one hour) to 604800 (seven days) seconds")
		}
		ttl = time.Duration(*in.Expiry) * time.Second
	}
	for _, f := range in.FeatureFlags {
		if err := checkSvixName("body", "featureFlags", f); err != nil {
			return err
		}
	}
	grant := Principal{FeatureFlags: compactFlags(in.FeatureFlags), ReadOnly: in.ReadOnly != nil && *in.ReadOnly}
	var create *hookd.ApplicationIn
	if in.Application != nil {
		if create, err = in.Application.toHookd(); err != nil {
			return inApplication(err)
		}
	}
	app, err := s.client.GetApplication(r.Context(), ref)
	if errors.Is(err, hookd.ErrNotFound) && create != nil {
		app, err = s.createPortalApp(r, ref, in.Application.UID, create)
	}
	if err != nil {
		return err
	}
	grant.AppID = app.ID
	out, err := s.issueAccess(r, grant, ttl)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// compactFlags is flags without repeats, in the order given (Svix keeps a token's flags as a set);
// nil when there are none.
func compactFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// createPortalApp creates the application AppPortalAccessIn asked for under the path's uid ref,
// or returns the one a concurrent request created under it. uid is the body's.
func (s *Server) createPortalApp(r *http.Request, ref string, uid *string, in *hookd.ApplicationIn) (*hookd.Application, error) {
	switch {
	case uid == nil:
		return nil, invalidField("body", "application.uid", "Application UID not set in body")
	case *uid != ref:
		return nil, invalidField("body", "application.uid", "Application UID in the path and body must match")
	}
	app, err := s.client.CreateApplication(r.Context(), in)
	if errors.Is(err, hookd.ErrConflict) {
		return s.client.GetApplication(r.Context(), in.UID)
	}
	return app, inApplication(err)
}

// inApplication names the fields of a 422 about an inline application as its fields
// ("application.name").
func inApplication(err error) error {
	var ve *validationError
	if errors.As(err, &ve) {
		out := &validationError{Detail: slices.Clone(ve.Detail)}
		for i, d := range out.Detail {
			if len(d.Loc) == 2 && d.Loc[0] == "body" {
				out.Detail[i].Loc = []string{"body", "application." + d.Loc[1]}
			}
		}
		return out
	}
	var he *hookd.ValidationError
	if errors.As(err, &he) {
		return invalidField("body", "application."+he.Field, he.Reason)
	}
	return err
}

// dashboardAccess is the 1.44 spec's older name of appPortalAccess, without a body.
func (s *Server) dashboardAccess(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if err := rc.requireAdmin(); err != nil {
		return err
	}
	// The caller is admin, so resolveApp's access check always passes.
	app, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	out, err := s.issueAccess(r, Principal{AppID: app.ID}, defaultPortalTTL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// issueAccess mints a token that authenticates as p and the portal URL that carries it, on the
// public URL (Config.PublicURL, else the listener's address).
func (s *Server) issueAccess(r *http.Request, p Principal, ttl time.Duration) (*accessOut, error) {
	issuer, ok := s.cfg.Auth.(TokenIssuer)
	if !ok {
		return nil, errNoIssuer
	}
	token, err := issuer.IssueToken(r.Context(), p, ttl)
	if err != nil {
		return nil, err
	}
	u := s.publicURL
	if u == nil {
		u = requestBase(r)
	}
	link := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/portal", RawQuery: url.Values{"token": {token}}.Encode()}
	return &accessOut{URL: link.String(), Token: token}, nil
}

// logout revokes the calling app-portal token (204). As in Svix, only app-portal tokens log out:
// the admin token is refused with 403, so that no request locks the operator out.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	if rc.principal.AppID == "" {
		return &apiError{http.StatusForbidden, "insufficient_access", "Only app-portal tokens log out; the admin token is changed with hookd's configuration."}
	}
	issuer, ok := s.cfg.Auth.(TokenIssuer)
	if !ok {
		return errNoIssuer
	}
	if err := issuer.Revoke(r.Context(), bearer(r)); err != nil && !errors.Is(err, hookd.ErrNotFound) {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
