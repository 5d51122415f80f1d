package server

import "net/http"

// routes registers every path of both specs. Each resource's file registers its own.
func (s *Server) routes() {
	s.handle("GET /api/v1/health", true, func(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	s.handle("GET /api/v1/health/ping", true, func(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	s.authRoutes()
	s.applicationRoutes()
	s.eventTypeRoutes()
	s.endpointRoutes()
	s.messageRoutes()
	s.attemptRoutes()
	s.mux.HandleFunc("/", s.noRoute) // 404, or 405 for a route under other methods: method_not_allowed.go
}
