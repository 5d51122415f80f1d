package server

import (
	"net/http"

	"github.com/hookd/hookd"
)

// The path parameters of the routes under /api/v1/app/{app_id}: {app_id}, {endpoint_id} and
// {msg_id} are each resolved here, by id or uid (eventId for a message).

// appPathParam reads {app_id}: an application id or uid, 1 to 256 characters of
// [a-zA-Z0-9-_.] (422 otherwise).
func appPathParam(r *http.Request) (string, error) {
	v := r.PathValue("app_id")
	if v == "" || len(v) > 256 || !svixID.MatchString(v) {
		return "", invalidField("path", "app_id", "must be an application id or uid: 1 to 256 characters of [a-zA-Z0-9-_.]")
	}
	return v, nil
}

// resolveApp validates {app_id} (422), finds its application by id or uid (404) and checks that the caller's
// token may act on it (403). Every handler under /api/v1/app/{app_id} starts with it.
func (s *Server) resolveApp(r *http.Request, rc *reqCtx) (*hookd.Application, error) {
	ref, err := appPathParam(r)
	if err != nil {
		return nil, err
	}
	app, err := s.client.GetApplication(r.Context(), ref)
	if err != nil {
		return nil, err
	}
	if err := rc.appAllowed(app.ID); err != nil {
		return nil, err
	}
	return app, nil
}

// resolveEndpoint finds the endpoint of {endpoint_id} (id or uid) in app (404).
func (s *Server) resolveEndpoint(r *http.Request, app *hookd.Application) (*hookd.Endpoint, error) {
	return s.client.GetEndpoint(r.Context(), app.ID, r.PathValue("endpoint_id"))
}

// resolveMessage finds the message of {msg_id} (id or eventId) in app (404).
func (s *Server) resolveMessage(r *http.Request, app *hookd.Application) (*hookd.Message, error) {
	return s.client.GetMessage(r.Context(), app.ID, r.PathValue("msg_id"))
}

// resolveAppEndpoint is resolveApp then resolveEndpoint, for the routes under
// /api/v1/app/{app_id}/endpoint/{endpoint_id}.
func (s *Server) resolveAppEndpoint(r *http.Request, rc *reqCtx) (*hookd.Application, *hookd.Endpoint, error) {
	app, err := s.resolveApp(r, rc)
	if err != nil {
		return nil, nil, err
	}
	ep, err := s.resolveEndpoint(r, app)
	if err != nil {
		return nil, nil, err
	}
	return app, ep, nil
}
