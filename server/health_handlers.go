package server

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/outage"
)

// healthPart is one part of a health report, as Svix's server writes it: status "ok" or "error".
// hookd adds reason to a failed part: what fails, in a few words that name no host, file or
// user (the endpoint needs no token); the log has the whole error.
type healthPart struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// healthReport is the body of GET /api/v1/health, in the shape of Svix's server: the database,
// the queue and the cache, and, in a process whose workers run, the workers. hookd's queue is the
// store's own by default, in the same database, so it is reported with it; hookd has no cache,
// so the cache is always ok.
type healthReport struct {
	Database healthPart  `json:"database"`
	Queue    healthPart  `json:"queue"`
	Cache    healthPart  `json:"cache"`
	Workers  *healthPart `json:"workers,omitempty"`
}

// Health serves the health checks of a client: GET or HEAD /api/v1/health, which checks what the
// client depends on (hookd.Client.Health) and answers 200 with every part ok, else 503 with the
// parts that failed marked "error" and a reason; and /api/v1/health/ping, which answers 204 while
// the process serves. A trailing slash is ignored. A Server serves them among its routes; a
// process that serves no API (hookd serve --role worker) serves this alone.
type Health struct {
	client *hookd.Client
	// The failed parts, logged as outages (package outage): once with the whole error, then a
	// summary every 30 s, not a line per check.
	database, queue, workers *outage.Cause
}

// NewHealth returns the health checks of client, logging the parts that fail to logger (nil:
// discard).
func NewHealth(client *hookd.Client, logger *slog.Logger) *Health {
	out := outage.New(logger, nil)
	return &Health{client: client,
		database: out.Cause("health: database"), queue: out.Cause("health: queue"), workers: out.Cause("health: workers")}
}

func (h *Health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, &apiError{Code: "method_not_allowed", Detail: "Use GET or HEAD."})
		return
	}
	switch strings.TrimRight(r.URL.Path, "/") {
	case "/api/v1/health":
		h.report(w, r)
	case "/api/v1/health/ping":
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusNotFound, &apiError{Code: "not_found", Detail: "Not found; the health checks are GET /api/v1/health and /api/v1/health/ping."})
	}
}

// report checks the client and writes the report.
func (h *Health) report(w http.ResponseWriter, r *http.Request) {
	got := h.client.Health(r.Context())
	rep := &healthReport{
		Database: h.part(h.database, got.Database),
		Queue:    h.part(h.queue, got.Queue),
		Cache:    healthPart{Status: "ok"},
	}
	if got.Working {
		p := h.part(h.workers, got.Workers)
		rep.Workers = &p
	}
	status := http.StatusOK
	if !got.OK() {
		// 503, as the API answers while its database is away: a probe or a balancer takes the
		// process out until it recovers. (Svix's server answers 500; its SDKs see an error either
		// way.)
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, rep)
}

// part is one part of the report, its failure logged through cause.
func (h *Health) part(cause *outage.Cause, err error) healthPart {
	if err == nil {
		cause.OK()
		return healthPart{Status: "ok"}
	}
	cause.Fail(err)
	reason := "failed"
	var he *hookd.HealthError
	if errors.As(err, &he) {
		reason = he.Reason
	}
	return healthPart{Status: "error", Reason: reason}
}

// ping answers 204 with no body: the server is up.
func (s *Server) ping(w http.ResponseWriter, _ *http.Request, _ *reqCtx) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// health serves GET /api/v1/health: see Health.
func (s *Server) health(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	s.healthz.report(w, r)
	return nil
}
