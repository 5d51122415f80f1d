// Package metrics exposes a hookd client's work to Prometheus, through client_golang on a registry
// of each Metrics' own: attempts by outcome, attempt latency, deliveries ended, the backlog of
// pending deliveries per endpoint read from the store on each scrape, the HTTP API by route, the
// circuit breakers, the queue's depth per lane, and the Go runtime and the process.
//
// Hand the client OnAttempt, wrap the API in Instrument, and mount the Metrics, an http.Handler:
//
//	m := metrics.New(store, nil)
//	client, err := hookd.NewClient(store, &hookd.Config{OnAttempt: m.OnAttempt})
//	m.ReportCircuits(client.OpenCircuits)
//	if d, ok := client.Queue().(hookd.QueueDepther); ok {
//		m.ReportQueue(d)
//	}
//	mux.Handle("/", m.Instrument(api))
//	mux.Handle("GET /metrics", m)
//
// The backlog's labels name applications and endpoints: serve it on a listener of its own, or set
// Config.Token so that a scrape must carry it as a bearer token.
//
// # Families
//
//	hookd_attempts_total{trigger, outcome}             counter: attempts recorded; trigger is
//	                                                   scheduled or manual, outcome success, gone
//	                                                   (410), throttled (429, 502, 504), redirect,
//	                                                   failure (another status) or error (no response)
//	hookd_attempt_duration_seconds                     histogram: time of one attempt
//	hookd_deliveries_total{status}                     counter: deliveries a scheduled attempt ended:
//	                                                   delivered, failed (schedule exhausted) or
//	                                                   cancelled (410)
//	hookd_pending_deliveries                           gauge: deliveries pending, all endpoints
//	hookd_oldest_pending_seconds                       gauge: age of the oldest pending delivery (0: none)
//	hookd_endpoint_pending_deliveries{app_id, endpoint_id}   gauge: one endpoint's pending deliveries
//	hookd_endpoint_oldest_pending_seconds{app_id, endpoint_id} gauge: age of its oldest
//	hookd_endpoint_circuit_open{app_id, endpoint_id}   gauge: 1 when this process's circuit breaker
//	                                                   holds back the endpoint's attempts, 0 when
//	                                                   not; for the endpoints whose circuit is open
//	                                                   and those with a series in the backlog
//	                                                   (ReportCircuits); app_id is empty for an open
//	                                                   endpoint with nothing pending
//	hookd_queue_jobs{lane, state}                      gauge: jobs in the queue, by lane (first,
//	                                                   retry, manual) and state (due: available or
//	                                                   running; scheduled: waiting for its time),
//	                                                   read on each scrape (ReportQueue)
//	hookd_store_up                                     gauge: 1 when this scrape read the backlog
//	                                                   and, with ReportHealth, the database took
//	                                                   writes; 0 when either failed
//	hookd_health_up{part}                              gauge: 1 when the part works, 0 when it
//	                                                   fails, as the health check finds it
//	                                                   (ReportHealth): database, queue, and workers
//	                                                   where they run
//	hookd_build_info{version, revision, goversion}     gauge: always 1; the labels name the build
//	hookd_retention_deleted_total{kind}                counter: rows the retention cleaner deleted:
//	                                                   messages, deliveries or attempts (CountRetention)
//	hookd_http_requests_total{route, method, code}     counter: API requests answered (Instrument)
//	hookd_http_request_duration_seconds{route, method} histogram: time to answer one
//	go_*, process_*                                    the Go runtime and the process (client_golang's
//	                                                   collectors; process_* where they can read the
//	                                                   process, Linux among them)
//
// route is the pattern of the API route that matched ("GET /api/v1/app/{app_id}/msg"), never the
// path: ids in paths would make the series unbounded. A request no route matches has route
// "unmatched", and a method outside the standard ones is "other".
//
// Counters start at zero with the process, every label value known in advance included. The
// backlog families come from the store, so every process on one database reports the same backlog;
// when the store cannot be read they are left out and hookd_store_up is 0, as it is while the
// database takes no writes (a full disk still answers reads). hookd_queue_jobs is left
// out of a scrape that cannot read the queue. The circuits are each process's own. Endpoints get
// series of their own up to Config.MaxEndpoints. The depth comes from a hookd.QueueDepther: the
// sqlite and postgres stores' own queues, redisqueue, riverqueue and postgres.RiverQueue are.
package metrics

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/internal/buildinfo"
	"github.com/hookd/hookd/internal/outage"
)

// Backlog reads the pending deliveries per endpoint; hookd.Store has it.
type Backlog interface {
	PendingSummary(ctx context.Context) ([]hookd.PendingEndpoint, error)
}

// Config configures Metrics. nil or zero fields mean the defaults.
type Config struct {
	// ScrapeTimeout bounds the store and queue reads of one scrape. Default: 5 s.
	ScrapeTimeout time.Duration
	// MaxEndpoints caps the endpoints given series of their own, keeping those whose oldest
	// pending delivery is oldest; the totals still count every endpoint. hookd_endpoint_circuit_open
	// has the same cap, filled with the open circuits first. Default: 1000; negative: no cap.
	MaxEndpoints int
	// Logger receives a line when a scrape cannot read the store or the queue. Default: discard.
	Logger *slog.Logger
	// Now is the clock the backlog's ages are measured on. Default: time.Now.
	Now func() time.Time
	// Token, when set, must come with each scrape as "Authorization: Bearer <Token>"; a scrape
	// without it gets 401 and nothing else, since the backlog's labels name applications and
	// endpoints. Default: none, every scrape is answered.
	Token string
}

// DefaultScrapeTimeout and DefaultMaxEndpoints are Config's defaults.
const (
	DefaultScrapeTimeout = 5 * time.Second
	DefaultMaxEndpoints  = 1000
)

func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.ScrapeTimeout <= 0 {
		out.ScrapeTimeout = DefaultScrapeTimeout
	}
	if out.MaxEndpoints == 0 {
		out.MaxEndpoints = DefaultMaxEndpoints
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out
}

// durationBuckets are the upper bounds of hookd_attempt_duration_seconds, up to twice the default
// delivery timeout.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30}

// Label values known in advance, exposed at zero from the start so that rate() sees each series
// begin.
var (
	triggers = []hookd.AttemptTrigger{hookd.TriggerScheduled, hookd.TriggerManual}
	outcomes = []string{"success", "gone", "throttled", "redirect", "failure", "error"}
	ended    = []hookd.DeliveryStatus{hookd.DeliveryDelivered, hookd.DeliveryFailed, hookd.DeliveryCancelled}
)

// attemptKey is the label pair of hookd_attempts_total.
type attemptKey struct {
	trigger hookd.AttemptTrigger
	outcome string
}

// Metrics counts attempts (through OnAttempt) and API requests (through Instrument), and serves
// every family. It is safe for concurrent use.
type Metrics struct {
	backlog Backlog
	cfg     Config
	reg     *prometheus.Registry // every family but those read on each scrape (scrapeCollector)

	attempts     *prometheus.CounterVec
	attemptOf    map[attemptKey]prometheus.Counter // attempts' children, looked up once
	duration     prometheus.Histogram
	deliveries   *prometheus.CounterVec
	deliveryOf   map[hookd.DeliveryStatus]prometheus.Counter
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	mu        sync.Mutex
	retention func() hookd.RetentionCount
	circuits  func() []string
	queue     hookd.QueueDepther
	health    func(context.Context) hookd.Health

	// The reads of a scrape that fail, logged as outages (package outage): once, then a summary
	// every 30 s, not a line per scrape.
	backlogFails, queueFails *outage.Cause
}

// New returns Metrics whose backlog families read backlog (nil: no backlog families).
func New(backlog Backlog, cfg *Config) *Metrics {
	c := cfg.withDefaults()
	out := outage.New(c.Logger, nil)
	m := &Metrics{
		backlog:      backlog,
		cfg:          c,
		reg:          prometheus.NewRegistry(),
		backlogFails: out.Cause("metrics: read the backlog"),
		queueFails:   out.Cause("metrics: read the queue's depth"),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookd_attempts_total",
			Help: "Attempts recorded, by trigger (scheduled, manual) and outcome (success, gone, throttled, redirect, failure, error: no response).",
		}, []string{"trigger", "outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "hookd_attempt_duration_seconds",
			Help:    "Time of one attempt, from connecting to reading the response.",
			Buckets: durationBuckets,
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookd_deliveries_total",
			Help: "Deliveries ended by a scheduled attempt, by status (delivered, failed: schedule exhausted, cancelled: HTTP 410).",
		}, []string{"status"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookd_http_requests_total",
			Help: "API requests answered, by route pattern (unmatched: no route), method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hookd_http_request_duration_seconds",
			Help:    "Time to answer one API request, by route pattern and method.",
			Buckets: httpBuckets,
		}, []string{"route", "method"}),
	}
	// Every label pair known in advance is exposed at zero from the start, and its child kept: a
	// vector's lookup hashes the label values on each call, five times the cost of the increment.
	m.attemptOf = map[attemptKey]prometheus.Counter{}
	for _, tr := range triggers {
		for _, o := range outcomes {
			m.attemptOf[attemptKey{tr, o}] = m.attempts.WithLabelValues(string(tr), o)
		}
	}
	m.deliveryOf = map[hookd.DeliveryStatus]prometheus.Counter{}
	for _, s := range ended {
		m.deliveryOf[s] = m.deliveries.WithLabelValues(string(s))
	}
	info := buildinfo.Read()
	m.reg.MustRegister(
		m.attempts, m.duration, m.deliveries, m.httpRequests, m.httpDuration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "hookd_build_info",
			Help:        "Always 1; the labels name the running build: release, VCS revision, Go version.",
			ConstLabels: prometheus.Labels{"version": info.Version, "revision": info.Revision, "goversion": info.GoVersion},
		}, func() float64 { return 1 }),
		retentionCollector{m},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// OnAttempt counts one recorded attempt and the delivery status it led to; it is shaped for
// hookd.Config.OnAttempt and does not block.
func (m *Metrics) OnAttempt(a *hookd.Attempt, status hookd.DeliveryStatus) {
	if a == nil {
		return
	}
	key := attemptKey{a.Trigger, outcomeOf(a)}
	if c, ok := m.attemptOf[key]; ok {
		c.Inc()
	} else {
		m.attempts.WithLabelValues(string(key.trigger), key.outcome).Inc()
	}
	// A scheduled attempt is made only on a pending delivery, so one that leaves it in another
	// status ended it. A manual attempt leaves an ended delivery as it was: not counted.
	if a.Trigger == hookd.TriggerScheduled && status != hookd.DeliveryPending {
		if c, ok := m.deliveryOf[status]; ok {
			c.Inc()
		} else {
			m.deliveries.WithLabelValues(string(status)).Inc()
		}
	}
	m.duration.Observe(a.Duration.Seconds())
}

// CountRetention makes the scrapes report what deleted returns, such as
// hookd.Client.RetentionDeleted, as hookd_retention_deleted_total; without it the family reads 0.
func (m *Metrics) CountRetention(deleted func() hookd.RetentionCount) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retention = deleted
}

// ReportCircuits makes the scrapes report the endpoints open returns, such as
// hookd.Client.OpenCircuits, as hookd_endpoint_circuit_open; without it the family is left out.
func (m *Metrics) ReportCircuits(open func() []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.circuits = open
}

// ReportQueue makes each scrape read q's depth per lane as hookd_queue_jobs; without it the family
// is left out.
func (m *Metrics) ReportQueue(q hookd.QueueDepther) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = q
}

// ReportHealth makes each scrape check health, such as hookd.Client.Health, as hookd_health_up
// (one series a part), and count a database that takes no writes as down in hookd_store_up;
// without it hookd_health_up is left out and hookd_store_up reports the backlog's read alone.
func (m *Metrics) ReportHealth(health func(context.Context) hookd.Health) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.health = health
}

// outcomeOf names an attempt's outcome as package delivery classifies its status; "error" when no
// response arrived.
func outcomeOf(a *hookd.Attempt) string {
	if a.StatusCode == 0 {
		if a.Success { // not made by hookd's worker, but keep the label set closed
			return "success"
		}
		return "error"
	}
	return delivery.Classify(a.StatusCode).String()
}

// ServeHTTP writes every family, in the format the scraper asks for (the text format by default).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if m.cfg.Token != "" && !m.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hookd metrics"`)
		http.Error(w, "401 unauthorized: scrape with Authorization: Bearer and the metrics token", http.StatusUnauthorized)
		return
	}
	// The families read on each scrape get a registry of this request's, so that their reads end
	// with it.
	scrape := prometheus.NewRegistry()
	if err := scrape.Register(&scrapeCollector{m: m, ctx: r.Context()}); err != nil {
		m.cfg.Logger.Error("metrics: register the scrape's collector", "error", err)
	}
	h := promhttp.HandlerFor(prometheus.Gatherers{m.reg, scrape}, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.cfg.Logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
	if r.Method == http.MethodHead {
		w = headWriter{w}
	}
	h.ServeHTTP(w, r)
}

// headWriter answers a HEAD: the headers of a GET, no body.
type headWriter struct{ http.ResponseWriter }

func (headWriter) Write(p []byte) (int, error) { return len(p), nil }

// authorized reports whether r carries the metrics token, compared in constant time.
func (m *Metrics) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(m.cfg.Token)) == 1
}
