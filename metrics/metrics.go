// Package metrics exposes a hookd client's work in the Prometheus text exposition format (0.0.4):
// attempts by outcome, attempt latency, deliveries ended, and the backlog of pending deliveries
// per endpoint, read from the store on each scrape.
//
// Hand the client OnAttempt and mount the Metrics, an http.Handler:
//
//	m := metrics.New(store, nil)
//	client, err := hookd.NewClient(store, &hookd.Config{OnAttempt: m.OnAttempt})
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
//	hookd_store_up                                     gauge: 1 when this scrape read the backlog
//	hookd_build_info{version, revision, goversion}     gauge: always 1; the labels name the build
//	hookd_retention_deleted_total{kind}                counter: rows the retention cleaner deleted:
//	                                                   messages, deliveries or attempts (CountRetention)
//
// Counters start at zero with the process. The backlog families come from the store, so every
// process on one database reports the same backlog; when the store cannot be read they are left
// out and hookd_store_up is 0.
package metrics

import (
	"bytes"
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
)

// Backlog reads the pending deliveries per endpoint; hookd.Store has it.
type Backlog interface {
	PendingSummary(ctx context.Context) ([]hookd.PendingEndpoint, error)
}

// Config configures Metrics. nil or zero fields mean the defaults.
type Config struct {
	// ScrapeTimeout bounds the store read of one scrape. Default: 5 s.
	ScrapeTimeout time.Duration
	// MaxEndpoints caps the endpoints given series of their own, keeping those whose oldest
	// pending delivery is oldest; the totals still count every endpoint. Default: 1000; negative:
	// no cap.
	MaxEndpoints int
	// Logger receives a line when a scrape cannot read the store. Default: discard.
	Logger *slog.Logger
	// Now is the clock the backlog's ages are measured on. Default: time.Now.
	Now func() time.Time
	// Token, when set, must come with each scrape as "Authorization: Bearer <Token>"; a scrape
	// without it gets 401 and nothing else, since the backlog's labels name applications and
	// endpoints. Default: none, every scrape is answered.
	Token string
}

func (c *Config) withDefaults() Config {
	var out Config
	if c != nil {
		out = *c
	}
	if out.ScrapeTimeout <= 0 {
		out.ScrapeTimeout = 5 * time.Second
	}
	if out.MaxEndpoints == 0 {
		out.MaxEndpoints = 1000
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

type attemptKey struct {
	trigger hookd.AttemptTrigger
	outcome string
}

// Metrics counts attempts (through OnAttempt) and serves every family. It is safe for concurrent
// use.
type Metrics struct {
	backlog Backlog
	cfg     Config

	mu         sync.Mutex
	attempts   map[attemptKey]uint64
	deliveries map[hookd.DeliveryStatus]uint64
	buckets    []uint64 // per bound of durationBuckets, not cumulative
	durSum     float64
	durCount   uint64
	retention  func() hookd.RetentionCount
}

// New returns Metrics whose backlog families read backlog (nil: no backlog families).
func New(backlog Backlog, cfg *Config) *Metrics {
	m := &Metrics{
		backlog:    backlog,
		cfg:        cfg.withDefaults(),
		attempts:   map[attemptKey]uint64{},
		deliveries: map[hookd.DeliveryStatus]uint64{},
		buckets:    make([]uint64, len(durationBuckets)),
	}
	for _, tr := range triggers {
		for _, o := range outcomes {
			m.attempts[attemptKey{tr, o}] = 0
		}
	}
	for _, s := range ended {
		m.deliveries[s] = 0
	}
	return m
}

// OnAttempt counts one recorded attempt and the delivery status it led to; it is shaped for
// hookd.Config.OnAttempt and does not block.
func (m *Metrics) OnAttempt(a *hookd.Attempt, status hookd.DeliveryStatus) {
	if a == nil {
		return
	}
	key := attemptKey{trigger: a.Trigger, outcome: outcomeOf(a)}
	secs := a.Duration.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[key]++
	// A scheduled attempt is made only on a pending delivery, so one that leaves it in another
	// status ended it. A manual attempt leaves an ended delivery as it was: not counted.
	if a.Trigger == hookd.TriggerScheduled && status != hookd.DeliveryPending {
		m.deliveries[status]++
	}
	if i, _ := slices.BinarySearch(durationBuckets, secs); i < len(durationBuckets) {
		m.buckets[i]++
	}
	m.durSum += secs
	m.durCount++
}

// CountRetention makes the scrapes report what deleted returns, such as
// hookd.Client.RetentionDeleted, as hookd_retention_deleted_total; without it the family reads 0.
func (m *Metrics) CountRetention(deleted func() hookd.RetentionCount) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retention = deleted
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

// ServeHTTP writes every family in the text format.
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
	var b bytes.Buffer
	m.write(r.Context(), &b)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b.Bytes())
}

// authorized reports whether r carries the metrics token, compared in constant time.
func (m *Metrics) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(m.cfg.Token)) == 1
}
