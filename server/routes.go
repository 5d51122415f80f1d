package server

import (
	"net/http"
	"strings"
)

// kind says whether a route asks for a token.
type kind int

const (
	authed kind = iota // a token is required (see Config.Auth); the token's principal reaches the handler
	public             // no token is read: the health checks
)

// apiRoute is one row of the API: its pattern ("METHOD /path", as http.ServeMux reads it), its kind
// and its handler.
type apiRoute struct {
	pattern string
	kind    kind
	handler handlerFunc
}

// Path prefixes the table shares.
const (
	appPath       = "/api/v1/app/{app_id}"
	endpointsPath = appPath + "/endpoint"
	endpointPath  = endpointsPath + "/{endpoint_id}"
	messagePath   = appPath + "/msg/{msg_id}"
	eventTypePath = "/api/v1/event-type/{event_type_name}"
)

// routeTable is every route of both Svix specs hookd serves: the paths of today's spec and the
// two attempt lists only the 1.44 spec has (deprecated there). A GET pattern serves HEAD too, as
// Svix does. A request no route takes gets 404, or 405 for a path served under other methods
// (method_not_allowed.go).
func (s *Server) routeTable() []apiRoute {
	return []apiRoute{
		{"GET /api/v1/health", public, s.health},
		{"GET /api/v1/health/ping", public, s.ping},

		{"POST /api/v1/auth/app-portal-access/{app_id}", authed, s.appPortalAccess},
		{"POST /api/v1/auth/dashboard-access/{app_id}", authed, s.dashboardAccess},
		{"POST /api/v1/auth/logout", authed, s.logout},

		{"GET /api/v1/app", authed, s.listApplications},
		{"POST /api/v1/app", authed, s.createApplication},
		{"GET " + appPath, authed, s.getApplication},
		{"PUT " + appPath, authed, s.putApplication},
		{"PATCH " + appPath, authed, s.patchApplication},
		{"DELETE " + appPath, authed, s.deleteApplication},

		{"GET /api/v1/event-type", authed, s.listEventTypes},
		{"POST /api/v1/event-type", authed, s.createEventType},
		{"POST /api/v1/event-type/schema/generate-example", authed, s.generateExample},
		{"GET " + eventTypePath, authed, s.getEventType},
		{"PUT " + eventTypePath, authed, s.putEventType},
		{"PATCH " + eventTypePath, authed, s.patchEventType},
		{"DELETE " + eventTypePath, authed, s.deleteEventType},

		{"GET " + endpointsPath, authed, s.listEndpoints},
		{"POST " + endpointsPath, authed, s.createEndpoint},
		{"GET " + endpointPath, authed, s.getEndpoint},
		{"PUT " + endpointPath, authed, s.updateEndpoint},
		{"PATCH " + endpointPath, authed, s.patchEndpoint},
		{"DELETE " + endpointPath, authed, s.deleteEndpoint},
		{"GET " + endpointPath + "/headers", authed, s.getEndpointHeaders},
		{"PUT " + endpointPath + "/headers", authed, s.updateEndpointHeaders},
		{"PATCH " + endpointPath + "/headers", authed, s.patchEndpointHeaders},
		{"GET " + endpointPath + "/secret", authed, s.getEndpointSecret},
		{"POST " + endpointPath + "/secret/rotate", authed, s.rotateEndpointSecret},
		{"POST " + endpointPath + "/recover", authed, s.recoverEndpoint},
		{"POST " + endpointPath + "/send-example", authed, s.sendEndpointExample},
		{"GET " + endpointPath + "/stats", authed, s.endpointStats},

		{"GET " + appPath + "/msg", authed, s.listMessages},
		{"POST " + appPath + "/msg", authed, s.createMessage},
		{"GET " + messagePath, authed, s.getMessage},
		{"DELETE " + messagePath + "/content", authed, s.expungeMessageContent},

		{"GET " + appPath + "/attempt/endpoint/{endpoint_id}", authed, s.listEndpointAttempts}, // 1.44 spec
		{"GET " + appPath + "/attempt/msg/{msg_id}", authed, s.listMessageAttempts},
		{"GET " + messagePath + "/attempt", authed, s.listMessageAttempts}, // 1.44 spec
		{"GET " + messagePath + "/endpoint/{endpoint_id}/attempt", authed, s.listMessageEndpointAttempts},
		{"GET " + messagePath + "/attempt/{attempt_id}", authed, s.getAttempt},
		{"DELETE " + messagePath + "/attempt/{attempt_id}/content", authed, s.expungeAttemptContent},
		{"GET " + messagePath + "/endpoint", authed, s.listAttemptedDestinations},
		{"GET " + endpointPath + "/msg", authed, s.listAttemptedMessages},
		{"POST " + messagePath + "/endpoint/{endpoint_id}/resend", authed, s.resendMessage},
	}
}

// routes registers the route table, then the answer for a request no route takes.
func (s *Server) routes() {
	for _, rt := range s.routeTable() {
		s.handle(rt)
	}
	s.mux.HandleFunc("/", s.noRoute)
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
// until it is listed there.
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
	"GET " + endpointPath + "/secret":                 readsSecret,
	"POST /api/v1/event-type/schema/generate-example": reads,
	"POST /api/v1/auth/logout":                        reads,
}

// errReadOnly answers a read-only token on a route that writes or reads a secret.
var errReadOnly = &apiError{http.StatusForbidden, "insufficient_access", "This app-portal token is read-only: it may not change anything, send messages or read endpoint secrets."}
