package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/servedefaults"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/metrics"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/ui"
)

// Limits of the shutdown (the HTTP server's are serving's).
const (
	shutdownTimeout = 10 * time.Second // for the requests in flight
	drainExtra      = 5 * time.Second  // beyond --timeout, for the attempts in flight
	jobTimeoutExtra = 30 * time.Second // beyond --timeout, for a job's bookkeeping
)

// runServe handles "hookd serve".
func runServe(ctx context.Context, e *env, args []string) error {
	cfg, err := parseServeConfig(e, args, os.LookupEnv)
	if err != nil {
		return err
	}
	return serve(ctx, e, cfg)
}

// newLogger returns the logger of serve, on stderr.
func newLogger(w io.Writer, cfg *serveConfig) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs until ctx ends, then shuts down in order: requests, attempts, database.
func serve(ctx context.Context, e *env, cfg *serveConfig) (err error) {
	logger := newLogger(e.stderr, cfg)
	// fail reports a start-up failure; one caused by ctx ending (SIGTERM during start-up) is a stop.
	fail := func(hint, format string, args ...any) error {
		if ctx.Err() != nil {
			logger.Info("start-up interrupted", "error", fmt.Sprintf(format, args...))
			return nil
		}
		return failf(hint, format, args...)
	}

	// The addresses are bound before anything is stored: a start that cannot listen leaves the
	// database as it found it.
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.listen)
	if err != nil {
		return fail("choose another --listen, or stop what holds the address", "serve: %v", err)
	}
	defer ln.Close() // after Shutdown, a no-op
	metricsHandler := &lateHandler{}
	if cfg.metricsListen != "" {
		ms, err := startMetrics(ctx, cfg.metricsListen, metricsHandler, logger)
		if err != nil {
			return fail("choose another --metrics-listen, or stop what holds the address", "serve: %v", err)
		}
		defer ms.shutdown(logger) // after the API's shutdown and the drain
		fmt.Fprintf(e.stderr, "metrics on %s/metrics\n", ms.url)
	}

	store, err := openDB(ctx, cfg.db, logger)
	if err != nil {
		return fail(openFailureHint(cfg.db, err), "serve: open the database: %v", err)
	}
	defer func() {
		if cerr := store.Close(); cerr != nil && err == nil {
			err = failf("", "serve: %v", cerr)
		}
	}()

	jobTimeout := cfg.longestAttempt() + jobTimeoutExtra
	rq, err := openQueue(cfg, store, jobTimeout, logger)
	if err != nil {
		return fail(`check --queue (run "hookd serve --help")`, "serve: the queue: %v", err)
	}
	var queue hookd.Queue
	if rq != nil {
		queue = rq
		defer rq.Close() // after the client has stopped (deferred later, run earlier)
	}
	m := metrics.New(store, &metrics.Config{Logger: logger, Token: cfg.metricsToken})
	metricsHandler.set(m)
	client, err := hookd.NewClient(store, &hookd.Config{
		Queue:         queue,
		JobTimeout:    jobTimeout,
		Logger:        logger,
		Workers:       cfg.workers,
		SlotLease:     cfg.slotLease,
		Delivery:      &delivery.Config{Timeout: cfg.timeout, AllowSubnets: cfg.allowSubnets},
		RetrySchedule: cfg.retrySchedule,
		MaxTimeout:    cfg.longestAttempt(),
		MaxPayload:    cfg.maxPayload,
		OnAttempt:     m.OnAttempt,
		Retention:     cfg.retention,
		EnqueueOnly:   cfg.role == roleAPI, // another process works the jobs: no warning that they wait

		OperationalWebhookURL:    cfg.opsURL,
		OperationalWebhookSecret: cfg.opsSecret,
		MainKey:                  cfg.mainKey,
		SignatureHeaders:         cfg.sigHeaders,

		MaxEndpointsPerApp: cfg.maxEndpoints,
		MessageRatePerApp:  cfg.messageRate,
		MessageBurstPerApp: cfg.messageBurst,
	})
	if err != nil {
		return fail("", "serve: %v", err)
	}
	m.CountRetention(client.RetentionDeleted)
	m.ReportCircuits(client.OpenCircuits)
	m.ReportHealth(client.Health)
	if d, ok := client.Queue().(hookd.QueueDepther); ok {
		m.ReportQueue(d)
	}
	// The queue stops when its Start context ends; it must outlive ctx to drain after the HTTP
	// server, so it gets a context that is never cancelled and Stop ends it. A start-up failure
	// after this point stops it again.
	serving := false // true once the HTTP server runs; shutdown then stops the client
	if cfg.role != roleAPI {
		if err := client.Start(context.WithoutCancel(ctx)); err != nil {
			hint := ""
			if rq != nil {
				hint = "check that Redis answers at --queue"
			}
			return fail(hint, "serve: %v", err)
		}
		defer func() {
			if !serving {
				stopCtx, cancel := context.WithTimeout(context.Background(), cfg.longestAttempt()+drainExtra)
				defer cancel()
				_ = client.Stop(stopCtx)
			}
		}()
	}

	mux := http.NewServeMux()
	if cfg.metricsListen == "" {
		mux.Handle("/metrics", m)
	}
	var generated string
	if cfg.role == roleWorker {
		// No API: the health checks alone, of what this process depends on.
		health := server.NewHealth(client, logger)
		mux.Handle("/api/v1/health/", health)
		mux.Handle("/api/v1/health", health)
	} else {
		var auth *server.TokenAuth
		auth, generated, err = server.NewTokenAuth(ctx, store, cfg.token, time.Now)
		if err != nil {
			return fail("", "serve: %v", err)
		}
		if generated != "" {
			// Only its hash is stored: a failure from here on still shows it, so it is never lost.
			defer func() {
				if !serving {
					fmt.Fprintf(e.stderr, "admin token (shown once, store it): %s\n", generated)
				}
			}()
		}
		api, err := server.New(client, &server.Config{
			Auth:    auth,
			Logger:  logger,
			MaxBody: int64(cfg.maxPayload) + servedefaults.MaxBodyOverhead,

			PublicURL: cfg.publicURL,
		})
		if err != nil {
			return fail("", "serve: %v", err)
		}
		mux.Handle("/", m.Instrument(api))
		pages, err := ui.New(client, auth, &ui.Config{Logger: logger, PublicURL: cfg.publicURL, PortalFrameAncestors: cfg.frameAncestors,
			PortalTitle: cfg.portalTitle, PortalLogoURL: cfg.portalLogo, PortalAccent: cfg.portalAccent})
		if err != nil {
			return fail("", "serve: %v", err)
		}
		for _, p := range []string{"/ui/", "/portal", "/portal/"} {
			mux.Handle(p, pages)
		}
		mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusSeeOther))
	}

	if generated != "" {
		fmt.Fprintf(e.stderr, "admin token (shown once, store it): %s\n", generated)
	}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(e.stderr, "listening on %s\n", url)
	if cfg.role != roleWorker {
		fmt.Fprintf(e.stderr, "dashboard on %s/ui/\n", url)
	}
	if len(cfg.frameAncestors) > 0 && !strings.HasPrefix(cfg.publicURL, "https://") {
		logger.Warn("the portal may be framed, but its cookie works in a frame only over HTTPS: set an https --public-url")
	}
	logger.Info("hookd serving", "url", url, "db", cfg.db.String(), "role", cfg.role, "redis_queue", cfg.queueURL != "",
		"workers", cfg.workers[hookd.LaneFirst], "timeout", cfg.timeout, "allow_subnets", len(cfg.allowSubnets),
		"max_endpoints_per_app", cfg.maxEndpoints, "max_messages_per_second_per_app", cfg.messageRate,
		"metrics_listen", cfg.metricsListen, "metrics_token", cfg.metricsToken != "")

	srv := newHTTPServer(mux, logger)
	served := make(chan error, 1)
	serving = true
	go func() { served <- srv.Serve(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down: no new requests, then draining the attempts in flight")
	case serveErr = <-served:
		logger.Error("HTTP server stopped", "error", serveErr)
	}
	shutdown(srv, client, cfg, logger)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return failf("", "serve: %v", serveErr)
	}
	logger.Info("stopped")
	return nil
}

// shutdown stops the HTTP server (requests in flight get shutdownTimeout) and then the client
// (attempts in flight get the delivery timeout and drainExtra).
func shutdown(srv *http.Server, client *hookd.Client, cfg *serveConfig, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("requests still in flight were cut off", "after", shutdownTimeout, "error", err)
		_ = srv.Close()
	}
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), cfg.longestAttempt()+drainExtra)
	defer cancel()
	if err := client.Stop(ctx); err != nil {
		logger.Warn("attempts still in flight were abandoned; they are made again on the next start", "error", err)
	}
}

// lateHandler serves 503 until set gives it the handler to serve: the metrics listener is bound
// before the database that /metrics reads is open.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) set(h http.Handler) { l.h.Store(&h) }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := l.h.Load()
	if h == nil {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}
