package metrics

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookd/hookd"
)

// The families read on each scrape, from the store, the queue and the client's functions.
var (
	pendingDesc = prometheus.NewDesc("hookd_pending_deliveries",
		"Deliveries pending (queued or waiting for a retry), all endpoints.", nil, nil)
	oldestDesc = prometheus.NewDesc("hookd_oldest_pending_seconds",
		"Age of the oldest pending delivery; 0 when none is pending.", nil, nil)
	endpointPendingDesc = prometheus.NewDesc("hookd_endpoint_pending_deliveries",
		"Deliveries pending for one endpoint.", []string{"app_id", "endpoint_id"}, nil)
	endpointOldestDesc = prometheus.NewDesc("hookd_endpoint_oldest_pending_seconds",
		"Age of one endpoint's oldest pending delivery.", []string{"app_id", "endpoint_id"}, nil)
	storeUpDesc = prometheus.NewDesc("hookd_store_up",
		"1 when this scrape read the backlog from the store and the database took writes; 0 when either failed.", nil, nil)
	healthUpDesc = prometheus.NewDesc("hookd_health_up",
		"1 when the part works, 0 when it fails, as the health check (GET /api/v1/health) finds it: database, queue, and workers where they run.",
		[]string{"part"}, nil)
	circuitOpenDesc = prometheus.NewDesc("hookd_endpoint_circuit_open",
		"1 when this process's circuit breaker holds back the endpoint's attempts, 0 when not; for open circuits and endpoints with pending deliveries.",
		[]string{"app_id", "endpoint_id"}, nil)
	queueJobsDesc = prometheus.NewDesc("hookd_queue_jobs",
		"Jobs in the queue, by lane (first, retry, manual) and state (due: available or running; scheduled: waiting for its time).",
		[]string{"lane", "state"}, nil)
	retentionDesc = prometheus.NewDesc("hookd_retention_deleted_total",
		"Rows the retention cleaner deleted, by kind (messages, deliveries, attempts).", []string{"kind"}, nil)
)

// lanes are the values of hookd_queue_jobs's lane label, each exposed even when empty.
var lanes = []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual}

// retentionCollector reports the counts of Metrics.CountRetention, 0 without it.
type retentionCollector struct{ m *Metrics }

func (c retentionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- retentionDesc }

func (c retentionCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	retention := c.m.retention
	c.m.mu.Unlock()
	var deleted hookd.RetentionCount
	if retention != nil {
		deleted = retention()
	}
	send(ch, retentionDesc, prometheus.CounterValue, float64(deleted.Attempts), "attempts")
	send(ch, retentionDesc, prometheus.CounterValue, float64(deleted.Deliveries), "deliveries")
	send(ch, retentionDesc, prometheus.CounterValue, float64(deleted.Messages), "messages")
}

// scrapeCollector reads the backlog, the circuits and the queue for one scrape, within the
// scrape's context and ScrapeTimeout.
type scrapeCollector struct {
	m   *Metrics
	ctx context.Context
}

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingDesc, oldestDesc, endpointPendingDesc, endpointOldestDesc, storeUpDesc, healthUpDesc, circuitOpenDesc, queueJobsDesc} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	ctx, cancel := context.WithTimeout(c.ctx, m.cfg.ScrapeTimeout)
	defer cancel()
	m.mu.Lock()
	circuits, queue, healthOf := m.circuits, m.queue, m.health
	m.mu.Unlock()

	// The health check runs beside the reads: each is bounded, and a scrape waits for the longer.
	var (
		health  hookd.Health
		checked = make(chan struct{})
	)
	go func() {
		defer close(checked)
		if healthOf != nil {
			health = healthOf(ctx)
		}
	}()
	var pending, shown []hookd.PendingEndpoint
	up := true // the store answered the scrape's reads, and took writes
	if m.backlog != nil {
		var err error
		pending, err = m.backlog.PendingSummary(ctx)
		if err != nil {
			m.backlogFails.Fail(err)
			up, pending = false, nil
		} else {
			m.backlogFails.OK()
			shown = m.collectBacklog(ch, pending)
		}
	}
	<-checked
	if healthOf != nil {
		up = up && health.Database == nil
		send(ch, healthUpDesc, prometheus.GaugeValue, gauge(health.Database == nil), "database")
		send(ch, healthUpDesc, prometheus.GaugeValue, gauge(health.Queue == nil), "queue")
		if health.Working {
			send(ch, healthUpDesc, prometheus.GaugeValue, gauge(health.Workers == nil), "workers")
		}
	}
	if m.backlog != nil || healthOf != nil {
		send(ch, storeUpDesc, prometheus.GaugeValue, gauge(up))
	}
	if circuits != nil {
		m.collectCircuits(ch, circuits(), pending, shown)
	}
	if queue != nil {
		m.collectQueue(ctx, ch, queue)
	}
}

// collectBacklog sends the backlog families and returns the endpoints given series of their own.
func (m *Metrics) collectBacklog(ch chan<- prometheus.Metric, pending []hookd.PendingEndpoint) []hookd.PendingEndpoint {
	now := m.cfg.Now()
	total, oldest := 0, 0.0
	for _, p := range pending {
		total += p.Pending
		oldest = max(oldest, age(now, p))
	}
	send(ch, pendingDesc, prometheus.GaugeValue, float64(total))
	send(ch, oldestDesc, prometheus.GaugeValue, oldest)

	shown := pending
	if n := m.cfg.MaxEndpoints; n > 0 && len(shown) > n {
		shown = slices.Clone(shown)
		slices.SortStableFunc(shown, func(x, y hookd.PendingEndpoint) int { return x.Oldest.Compare(y.Oldest) })
		shown = shown[:n]
	}
	for _, p := range shown {
		send(ch, endpointPendingDesc, prometheus.GaugeValue, float64(p.Pending), p.AppID, p.EndpointID)
		send(ch, endpointOldestDesc, prometheus.GaugeValue, age(now, p), p.AppID, p.EndpointID)
	}
	return shown
}

// collectCircuits sends hookd_endpoint_circuit_open: 1 for each open circuit, then 0 for each
// endpoint with a backlog series of its own whose circuit is closed, MaxEndpoints series at most.
// The application comes from the backlog; it is empty for an endpoint with nothing pending.
func (m *Metrics) collectCircuits(ch chan<- prometheus.Metric, open []string, pending, shown []hookd.PendingEndpoint) {
	appOf := make(map[string]string, len(pending))
	for _, p := range pending {
		appOf[p.EndpointID] = p.AppID
	}
	limit := m.cfg.MaxEndpoints
	sent := make(map[string]bool, len(open)+len(shown))
	send := func(id string, v float64) bool {
		if limit > 0 && len(sent) >= limit {
			return false
		}
		if sent[id] {
			return true
		}
		sent[id] = true
		send(ch, circuitOpenDesc, prometheus.GaugeValue, v, appOf[id], id)
		return true
	}
	for _, id := range open {
		if !send(id, 1) {
			return
		}
	}
	for _, p := range shown {
		if !send(p.EndpointID, 0) {
			return
		}
	}
}

// collectQueue sends hookd_queue_jobs for every lane and state, or nothing when q cannot be read.
func (m *Metrics) collectQueue(ctx context.Context, ch chan<- prometheus.Metric, q hookd.QueueDepther) {
	depths, err := q.QueueDepth(ctx)
	if err != nil {
		m.queueFails.Fail(err)
		return
	}
	m.queueFails.OK()
	for _, l := range lanes {
		var d hookd.LaneDepth
		for _, x := range depths {
			if x.Lane == l {
				d.Due += x.Due
				d.Scheduled += x.Scheduled
			}
		}
		send(ch, queueJobsDesc, prometheus.GaugeValue, float64(d.Due), string(l), "due")
		send(ch, queueJobsDesc, prometheus.GaugeValue, float64(d.Scheduled), string(l), "scheduled")
	}
}

// send sends one sample of desc. A label value the format cannot carry (not UTF-8) makes the
// sample an invalid metric: the scrape leaves it out and logs the error, and serves the rest.
func send(ch chan<- prometheus.Metric, desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(desc, typ, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(desc, err)
	}
	ch <- m
}

// gauge is 1 for true, 0 for false.
func gauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// age is how long ago p's oldest pending delivery was created, in seconds, never below 0.
func age(now time.Time, p hookd.PendingEndpoint) float64 {
	return max(now.Sub(p.Oldest).Seconds(), 0)
}
