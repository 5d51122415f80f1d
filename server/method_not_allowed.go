package server

import (
	"net/http"
	"strings"
)

// routeMethods are the methods the API's routes use.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// noRoute answers a request that no route takes, as Svix-shaped JSON: 405 with an Allow header
// when the path is a route under other methods, else 404. (The catch-all "/" route matches every
// method, so ServeMux's own 405, in plain text, never happens.)
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range routeMethods {
		if m == r.Method {
			continue
		}
		probe := r.WithContext(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		writeError(w, &apiError{Status: http.StatusNotFound, Code: "not_found", Detail: "No such route: " + r.Method + " " + r.URL.Path})
		return
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
		Detail: "Method " + r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + strings.Join(allowed, ", ") + "."})
}
