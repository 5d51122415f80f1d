package server

import (
	"net/http"
	"strings"
)

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

// access is what a route does, as far as a read-only app-portal token is concerned.
type access int

const (
	reads       access = iota // reads what the token may see: every token
	writes                    // changes something or sends a message: not a read-only token
	readsSecret               // reads an endpoint's signing secret: not a read-only token
)

// accessOf is the access of the route pattern ("METHOD /path"): a GET reads and every other method
// writes, but for the routes accessExceptions names. A new route that is not a GET is a write
// until it is listed here.
func accessOf(pattern string) access {
	if a, ok := accessExceptions[pattern]; ok {
		return a
	}
	if strings.HasPrefix(pattern, http.MethodGet+" ") {
		return reads
	}
	return writes
}

// accessExceptions are the routes whose method does not say their access. The secret is withheld
// from a read-only token as Svix's base portal capability withholds it; generate-example computes
// an answer from the body alone; logout ends the calling token and touches nothing else.
var accessExceptions = map[string]access{
	"GET /api/v1/app/{app_id}/endpoint/{endpoint_id}/secret": readsSecret,
	"POST /api/v1/event-type/schema/generate-example":        reads,
	"POST /api/v1/auth/logout":                               reads,
}

// errReadOnly answers a read-only token on a route that writes or reads a secret.
var errReadOnly = &apiError{http.StatusForbidden, "insufficient_access", "This app-portal token is read-only: it may not change anything, send messages or read endpoint secrets."}
