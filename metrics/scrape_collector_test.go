package metrics_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/metrics"
	"github.com/hookd/hookd/sqlite"
)

// The circuit gauge covers the open circuits and the endpoints with a backlog series, no more
// than MaxEndpoints, the open ones first.
func TestCircuitGauge(t *testing.T) {
	t.Parallel()
	b := backlog{pending: []hookd.PendingEndpoint{
		{EndpointID: "ep_1", AppID: "app_1", Pending: 3, Oldest: now.Add(-90 * time.Second)},
		{EndpointID: "ep_2", AppID: "app_2", Pending: 2, Oldest: now.Add(-30 * time.Second)},
		{EndpointID: "ep_3", AppID: "app_3", Pending: 1, Oldest: now.Add(-10 * time.Second)},
	}}
	open := func() []string { return []string{"ep_2", "ep_idle"} }
	m := metrics.New(b, &metrics.Config{Now: func() time.Time { return now }})
	if out := scrape(t, m); strings.Contains(out, "hookd_endpoint_circuit_open") {
		t.Errorf("circuit gauge without ReportCircuits:\n%s", out)
	}
	m.ReportCircuits(open)
	has(t, scrape(t, m),
		"# TYPE hookd_endpoint_circuit_open gauge",
		`hookd_endpoint_circuit_open{app_id="app_1",endpoint_id="ep_1"} 0`,
		`hookd_endpoint_circuit_open{app_id="app_2",endpoint_id="ep_2"} 1`,
		`hookd_endpoint_circuit_open{app_id="app_3",endpoint_id="ep_3"} 0`,
		`hookd_endpoint_circuit_open{app_id="",endpoint_id="ep_idle"} 1`,
	)

	capped := metrics.New(b, &metrics.Config{MaxEndpoints: 3, Now: func() time.Time { return now }})
	capped.ReportCircuits(open)
	out := scrape(t, capped)
	has(t, out,
		`hookd_endpoint_circuit_open{app_id="app_2",endpoint_id="ep_2"} 1`,
		`hookd_endpoint_circuit_open{app_id="",endpoint_id="ep_idle"} 1`,
		`hookd_endpoint_circuit_open{app_id="app_1",endpoint_id="ep_1"} 0`,
	)
	if n := strings.Count(out, "\nhookd_endpoint_circuit_open{"); n != 3 {
		t.Errorf("%d circuit series, want the cap of 3:\n%s", n, out)
	}
}

// hookd_queue_jobs reads a real queue's depth on each scrape, every lane and state at zero
// included, and is left out when the queue cannot be read.
func TestQueueJobsGauge(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := store.NewQueue(nil)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []hookd.Job{
		{DeliveryID: "dlv_1", Attempt: 1},
		{DeliveryID: "dlv_2", Attempt: 2, NotBefore: time.Now().Add(time.Hour)},
	}
	if err := store.InTx(ctx, func(tx hookd.Tx) error { return q.EnqueueTx(ctx, tx, jobs) }); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(store, nil)
	m.ReportQueue(q.(hookd.QueueDepther))
	has(t, scrape(t, m),
		"# TYPE hookd_queue_jobs gauge",
		`hookd_queue_jobs{lane="first",state="due"} 1`,
		`hookd_queue_jobs{lane="first",state="scheduled"} 0`,
		`hookd_queue_jobs{lane="retry",state="due"} 0`,
		`hookd_queue_jobs{lane="retry",state="scheduled"} 1`,
		`hookd_queue_jobs{lane="manual",state="due"} 0`,
		`hookd_queue_jobs{lane="manual",state="scheduled"} 0`,
		"hookd_store_up 1",
	)

	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	out := scrape(t, m)
	has(t, out, "hookd_store_up 0")
	if strings.Contains(out, "hookd_queue_jobs") {
		t.Errorf("queue family from a closed store:\n%s", out)
	}
}

// A scrape shows the Go runtime's and the process's series, and two Metrics in one process each
// have their own registry.
func TestRuntimeCollectors(t *testing.T) {
	t.Parallel()
	a, b := metrics.New(nil, nil), metrics.New(nil, nil)
	a.OnAttempt(&hookd.Attempt{Trigger: hookd.TriggerScheduled, StatusCode: 200, Success: true}, hookd.DeliveryDelivered)
	outA, outB := scrape(t, a), scrape(t, b)
	for _, want := range []string{"\ngo_goroutines ", "\ngo_memstats_alloc_bytes ", "\ngo_info{"} {
		if !strings.Contains(outA, want) {
			t.Errorf("missing %q", strings.TrimSpace(want))
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(outA, "\nprocess_cpu_seconds_total ") {
		t.Error("missing process_cpu_seconds_total")
	}
	has(t, outA, `hookd_attempts_total{outcome="success",trigger="scheduled"} 1`)
	has(t, outB, `hookd_attempts_total{outcome="success",trigger="scheduled"} 0`)
}

// The store read of a scrape has a deadline within ScrapeTimeout.
func TestScrapeTimeoutBoundsTheRead(t *testing.T) {
	t.Parallel()
	var got context.Context
	m := metrics.New(ctxBacklog{seen: &got}, &metrics.Config{ScrapeTimeout: time.Minute})
	scrape(t, m)
	if got == nil {
		t.Fatal("the backlog was not read")
	}
	if dl, ok := got.Deadline(); !ok || time.Until(dl) > time.Minute {
		t.Errorf("the backlog read's deadline %v (%v), want within the ScrapeTimeout", dl, ok)
	}
}

type ctxBacklog struct{ seen *context.Context }

func (b ctxBacklog) PendingSummary(ctx context.Context) ([]hookd.PendingEndpoint, error) {
	*b.seen = ctx
	return nil, nil
}

// An id the text format cannot carry (not UTF-8) loses its series, not the scrape: no panic, no
// 500, the other series served.
func TestLabelNotUTF8(t *testing.T) {
	t.Parallel()
	b := backlog{pending: []hookd.PendingEndpoint{
		{EndpointID: "ep_1", AppID: "app_1", Pending: 1, Oldest: now},
		{EndpointID: "ep_\xff", AppID: "app_\xfe", Pending: 1, Oldest: now},
	}}
	out := scrape(t, metrics.New(b, &metrics.Config{Now: func() time.Time { return now }}))
	has(t, out, "hookd_pending_deliveries 2", `hookd_endpoint_pending_deliveries{app_id="app_1",endpoint_id="ep_1"} 1`, "hookd_store_up 1")
	if strings.Contains(out, "ep_\xff") {
		t.Errorf("a label that is not UTF-8 was served:\n%s", out)
	}
}
