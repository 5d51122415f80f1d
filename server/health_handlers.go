package server

import (
	"context"
	"net/http"
)

// storePinger is a store that can check its database answers (sqlite.Store and postgres.Store
// are).
type storePinger interface {
	Ping(ctx context.Context) error
}

// healthStatus is one part of a health report: "ok" or "error".
type healthStatus struct {
	Status string `json:"status"`
}

// healthReport is the body of GET /api/v1/health, in the shape of Svix's server: the database,
// the queue and the cache. hookd's queue is the store's own by default, in the same database, so
// it is reported with it; hookd has no cache, so the cache is always ok.
type healthReport struct {
	Database healthStatus `json:"database"`
	Queue    healthStatus `json:"queue"`
	Cache    healthStatus `json:"cache"`
}

// ping answers 204 with no body: the server is up.
func (s *Server) ping(w http.ResponseWriter, _ *http.Request, _ *reqCtx) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// health checks the database with a query: 200 with every part ok, else 500 with the part that
// failed marked "error", as Svix's server answers.
func (s *Server) health(w http.ResponseWriter, r *http.Request, _ *reqCtx) error {
	db := healthStatus{"ok"}
	if p, ok := s.client.Store().(storePinger); ok {
		if err := p.Ping(r.Context()); err != nil {
			s.cfg.Logger.Error("health check failed", "part", "database", "error", err)
			db = healthStatus{"error"}
		}
	}
	status := http.StatusOK
	if db.Status != "ok" {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, &healthReport{Database: db, Queue: db, Cache: healthStatus{"ok"}})
	return nil
}
