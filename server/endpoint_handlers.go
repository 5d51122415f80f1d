package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/signature"
)

// listEndpoints lists the application's endpoints newest first, as Svix's server does, or oldest
// first with order=ascending.
func (s *Server) listEndpoints(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	opts, err := listOptions(r, iterateEndpoints)
	if err != nil {
		return err
	}
	descending, err := queryOrder(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("order") == "" {
		descending = true
	}
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	list := func(o hookd.ListOptions) (*hookd.Page[hookd.Endpoint], error) {
		return s.client.ListEndpoints(r.Context(), a.ID, o)
	}
	var page *hookd.Page[hookd.Endpoint]
	if descending {
		page, err = newestFirst(opts, "ep_~", list)
	} else {
		page, err = list(opts)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(page, func(ep *hookd.Endpoint) any { return endpointOut(rc.gen, ep) }))
	return nil
}

func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	f, err := readEndpointIn(r)
	if err != nil {
		return err
	}
	if f.secret.given() {
		if err := checkEndpointSecret("secret", f.secret.v, hookd.SchemeStandard); err != nil {
			return err
		}
	}
	if err := s.checkEventTypesExist(r, rc, f); err != nil {
		return err
	}
	in := &hookd.EndpointIn{}
	f.applyTo(in, true)
	in.Secret = f.secret.v
	in.Headers = f.headers.v
	ep, err := s.createAndRead(r, a.ID, in)
	if err != nil {
		return renameLibraryField(err, f.libraryNames())
	}
	writeJSON(w, http.StatusCreated, endpointOut(rc.gen, ep))
	return nil
}

// readEndpointIn reads the body of a POST or PUT of an endpoint (EndpointIn, EndpointUpdate):
// url is required, a rate must be at least 1.
func readEndpointIn(r *http.Request) (*endpointFields, error) {
	b, err := decodeEndpointBody(r)
	if err != nil {
		return nil, err
	}
	f, err := readEndpointFields(b, 1)
	if err != nil {
		return nil, err
	}
	if !f.url.given() {
		return nil, invalidField("body", "url", "field required")
	}
	return f, nil
}

// createAndRead creates the endpoint and reads it back, so that the answer shows what was stored
// (times at the store's precision).
func (s *Server) createAndRead(r *http.Request, appID string, in *hookd.EndpointIn) (*hookd.Endpoint, error) {
	ep, err := s.client.CreateEndpoint(r.Context(), appID, in)
	if err != nil {
		return nil, err
	}
	return s.client.GetEndpoint(r.Context(), appID, ep.ID)
}

func (s *Server) getEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	_, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointOut(rc.gen, ep))
	return nil
}

// updateEndpoint replaces the endpoint's fields of EndpointUpdate (those absent take their
// defaults; headers, secret and hookd's own settings stay). As Svix does, a PUT to a uid that
// names no endpoint creates one with that uid (201).
func (s *Server) updateEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, err := s.resolveApp(r, rc)
	if err != nil {
		return err
	}
	f, err := readEndpointIn(r)
	if err != nil {
		return err
	}
	if err := s.checkEventTypesExist(r, rc, f); err != nil {
		return err
	}
	id := r.PathValue("endpoint_id")
	ep, err := s.client.EditEndpoint(r.Context(), a.ID, id, func(in *hookd.EndpointIn) error {
		f.applyTo(in, true)
		if f.headers.given() {
			in.Headers = f.headers.v
		}
		return nil
	})
	if errors.Is(err, hookd.ErrNotFound) && checkUID("endpoint_id", id, endpointIDPrefix) == nil {
		in := &hookd.EndpointIn{}
		f.applyTo(in, true)
		if in.UID == "" {
			in.UID = id
		}
		in.Headers = f.headers.v
		ep, err = s.createAndRead(r, a.ID, in)
		if err != nil {
			return renameLibraryField(err, f.libraryNames())
		}
		writeJSON(w, http.StatusCreated, endpointOut(rc.gen, ep))
		return nil
	}
	if err != nil {
		return renameLibraryField(err, f.libraryNames())
	}
	writeJSON(w, http.StatusOK, endpointOut(rc.gen, ep))
	return nil
}

// patchEndpoint changes the fields given; null sets a field back to its default (url cannot be
// null). A secret (1.44's EndpointPatch) replaces the signing secret at once; null makes a new
// one.
func (s *Server) patchEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, cur, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeEndpointBody(r)
	if err != nil {
		return err
	}
	f, err := readEndpointFields(b, 0)
	if err != nil {
		return err
	}
	if f.secret.given() {
		scheme := cur.Scheme
		if f.scheme.set {
			scheme = hookd.SignatureScheme(f.scheme.v)
		}
		if err := checkEndpointSecret("secret", f.secret.v, scheme); err != nil {
			return err
		}
	}
	if err := s.checkEventTypesExist(r, rc, f); err != nil {
		return err
	}
	ep, err := s.client.EditEndpoint(r.Context(), a.ID, cur.ID, func(in *hookd.EndpointIn) error {
		f.applyTo(in, false)
		if f.headers.set {
			in.Headers = f.headers.v
		}
		return nil
	})
	if err != nil {
		return renameLibraryField(err, f.libraryNames())
	}
	if f.secret.set {
		if _, err := s.client.RotateSecretGrace(r.Context(), a.ID, ep.ID, f.secret.v, 0); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, endpointOut(rc.gen, ep))
	return nil
}

// checkEndpointSecret checks a secret given through the API for an endpoint signing with scheme,
// naming field in the 422. As Svix's server does, the API takes a Standard Webhooks secret only
// with its prefix (whsec_ for HMAC, whsk_ for ed25519): "invalid prefix" otherwise. The library
// (hookd.CheckSecret) also takes a bare base64 secret, as Svix's receiver libraries do.
func checkEndpointSecret(field, secret string, scheme hookd.SignatureScheme) error {
	standard := scheme != hookd.SchemeStripe && scheme != hookd.SchemeEnvelope
	if standard && !strings.HasPrefix(secret, "whsec_") && !strings.HasPrefix(secret, "whsk_") {
		return invalidField("body", field, "invalid prefix")
	}
	var ve *hookd.ValidationError
	if err := hookd.CheckSecret(secret, scheme); errors.As(err, &ve) {
		return invalidField("body", field, ve.Reason)
	} else if err != nil {
		return err
	}
	return nil
}

func (s *Server) deleteEndpoint(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	if err := s.client.DeleteEndpoint(r.Context(), a.ID, ep.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getEndpointHeaders(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	_, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, endpointHeadersOf(ep.Headers))
	return nil
}

// updateEndpointHeaders replaces the endpoint's headers (EndpointHeadersIn).
func (s *Server) updateEndpointHeaders(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeEndpointBody(r)
	if err != nil {
		return err
	}
	h, err := bodyField[map[string]string](b, "an object of strings", "headers")
	if err != nil {
		return err
	}
	if !h.given() {
		return invalidField("body", "headers", "field required")
	}
	if err := checkEndpointHeaders(h.v, "headers"); err != nil {
		return err
	}
	_, err = s.client.EditEndpoint(r.Context(), a.ID, ep.ID, func(in *hookd.EndpointIn) error {
		in.Headers = h.v
		return nil
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// patchEndpointHeaders sets the headers given, removes those given as null, and removes those
// named in deleteHeaders (EndpointHeadersPatchIn; Svix Cloud's deleteHeaders, with which headers
// may be null or absent). Header names match without regard to case.
func (s *Server) patchEndpointHeaders(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeEndpointBody(r)
	if err != nil {
		return err
	}
	h, err := bodyField[map[string]*string](b, "an object of strings or nulls", "headers")
	if err != nil {
		return err
	}
	del, err := bodyField[[]string](b, "a list of strings", "deleteHeaders")
	if err != nil {
		return err
	}
	if !h.given() && !del.given() {
		return invalidField("body", "headers", "field required")
	}
	for k, v := range h.v {
		if err := checkEndpointHeaderName(k, "headers"); err != nil {
			return err
		}
		if v != nil {
			if err := checkEndpointHeaderValue(*v, "headers"); err != nil {
				return err
			}
		}
	}
	deleted, err := readDeleteHeaders(del.v, h.v)
	if err != nil {
		return err
	}
	_, err = s.client.EditEndpoint(r.Context(), a.ID, ep.ID, func(in *hookd.EndpointIn) error {
		if in.Headers == nil {
			in.Headers = map[string]string{}
		}
		for k := range in.Headers {
			if deleted[strings.ToLower(k)] {
				delete(in.Headers, k)
			}
		}
		for k, v := range h.v {
			if old, ok := endpointHeaderKey(in.Headers, k); ok {
				delete(in.Headers, old)
			}
			if v != nil {
				in.Headers[k] = *v
			}
		}
		return checkEndpointHeaders(in.Headers, "headers")
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readDeleteHeaders checks the names of deleteHeaders and returns them in lower case. A name
// both deleted and set in headers is a 422: the PATCH would mean two things.
func readDeleteHeaders(names []string, set map[string]*string) (map[string]bool, error) {
	out := make(map[string]bool, len(names))
	for _, k := range names {
		if !isHeaderToken(k) {
			return nil, invalidField("body", "deleteHeaders", "Invalid Header Name.")
		}
		out[strings.ToLower(k)] = true
	}
	for k, v := range set {
		if v != nil && out[strings.ToLower(k)] {
			return nil, invalidField("body", "deleteHeaders", fmt.Sprintf("header %q is both set in headers and deleted", k))
		}
	}
	return out, nil
}

func (s *Server) getEndpointSecret(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	key, err := s.client.EndpointSecret(r.Context(), a.ID, ep.ID)
	if err != nil {
		return err
	}
	// An ed25519 endpoint's receivers verify with the public key, which is what Svix's server
	// writes for it; the private whsk_ key never leaves hookd.
	if strings.HasPrefix(key, "whsk_") {
		if key, err = signature.PublicKey(key); err != nil {
			return fmt.Errorf("endpoint %s public key: %w", ep.ID, err)
		}
	}
	writeJSON(w, http.StatusOK, &endpointSecretOut{Key: key})
	return nil
}

// maxGracePeriod is the longest gracePeriodSeconds the spec allows: 7 days.
const maxGracePeriod = 7 * 24 * 60 * 60

// rotateEndpointSecret gives the endpoint a new secret (key, or a new one); the old ones keep
// signing for gracePeriodSeconds (today's spec), by default hookd.Config.RotationGrace. An empty
// body is {}.
func (s *Server) rotateEndpointSecret(w http.ResponseWriter, r *http.Request, rc *reqCtx) error {
	a, ep, err := s.resolveAppEndpoint(r, rc)
	if err != nil {
		return err
	}
	b, err := decodeOptionalEndpointBody(r)
	if err != nil {
		return err
	}
	key, err := bodyField[string](b, "a string", "key")
	if err != nil {
		return err
	}
	grace, err := bodyField[int](b, "a whole number", "gracePeriodSeconds")
	if err != nil {
		return err
	}
	if key.given() {
		if err := checkEndpointSecret("key", key.v, ep.Scheme); err != nil {
			return err
		}
	}
	if grace.given() {
		if grace.v < 0 || grace.v > maxGracePeriod {
			return invalidField("body", "gracePeriodSeconds", "must be from 0 to 604800")
		}
		_, err = s.client.RotateSecretGrace(r.Context(), a.ID, ep.ID, key.v, time.Duration(grace.v)*time.Second)
	} else {
		_, err = s.client.RotateSecret(r.Context(), a.ID, ep.ID, key.v)
	}
	if err != nil {
		return renameLibraryField(err, map[string]string{"secret": "key"})
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
