package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/hookd/hookd/cmd/hookd/internal/servedefaults"
)

// metricsServer serves /metrics alone on the address of --metrics-listen, so that the API's
// address (often public) does not list applications and endpoints.
type metricsServer struct {
	srv *http.Server
	url string
}

// startMetrics listens on addr and serves h at /metrics (and nothing else) until shutdown.
func startMetrics(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) (*metricsServer, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	ms := &metricsServer{
		srv: newHTTPServer(mux, logger),
		url: "http://" + ln.Addr().String(),
	}
	go func() {
		if err := ms.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "error", err)
		}
	}()
	return ms, nil
}

// shutdown stops the metrics server, giving a scrape in flight shutdownTimeout.
func (ms *metricsServer) shutdown(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := ms.srv.Shutdown(ctx); err != nil {
		logger.Warn("a scrape still in flight was cut off", "error", err)
		_ = ms.srv.Close()
	}
}

// newHTTPServer returns an http.Server for h with servedefaults' limits, logging its errors to
// logger as warnings.
func newHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	srv := servedefaults.NewHTTPServer(h)
	srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	return srv
}
