package server

// routes registers every path of both specs. Each resource's file registers its own.
func (s *Server) routes() {
	s.healthRoutes()
	s.authRoutes()
	s.applicationRoutes()
	s.eventTypeRoutes()
	s.endpointRoutes()
	s.messageRoutes()
	s.attemptRoutes()
	s.mux.HandleFunc("/", s.noRoute) // 404, or 405 for a route under other methods: method_not_allowed.go
}
