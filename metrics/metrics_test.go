package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/buildinfo"
	"github.com/hookd/hookd/metrics"
)

type backlog struct {
	pending []hookd.PendingEndpoint
	err     error
}

func (b backlog) PendingSummary(context.Context) ([]hookd.PendingEndpoint, error) {
	return b.pending, b.err
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4; charset=utf-8") {
		t.Fatalf("content type %q", ct)
	}
	return rec.Body.String()
}

// has fails the test unless every line is in out.
func has(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains("\n"+out, "\n"+l+"\n") {
			t.Errorf("missing line %q in:\n%s", l, out)
		}
	}
}

func TestCounters(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	sched := func(code int, d time.Duration) *hookd.Attempt {
		return &hookd.Attempt{Trigger: hookd.TriggerScheduled, StatusCode: code, Success: code/100 == 2, Duration: d}
	}
	m.OnAttempt(sched(200, 3*time.Millisecond), hookd.DeliveryDelivered)
	m.OnAttempt(sched(500, 10*time.Millisecond), hookd.DeliveryPending) // a retry follows
	m.OnAttempt(sched(0, 20*time.Second), hookd.DeliveryFailed)         // no response, schedule exhausted
	m.OnAttempt(sched(410, 40*time.Second), hookd.DeliveryCancelled)    // beyond the last bound
	m.OnAttempt(sched(503, 0), hookd.DeliveryPending)                   // a plain failure
	m.OnAttempt(&hookd.Attempt{Trigger: hookd.TriggerManual, StatusCode: 429}, hookd.DeliveryDelivered)
	m.OnAttempt(nil, hookd.DeliveryDelivered)
	out := scrape(t, m)
	has(t, out,
		"# TYPE hookd_attempts_total counter",
		`hookd_attempts_total{outcome="success",trigger="scheduled"} 1`,
		`hookd_attempts_total{outcome="failure",trigger="scheduled"} 2`,
		`hookd_attempts_total{outcome="error",trigger="scheduled"} 1`,
		`hookd_attempts_total{outcome="gone",trigger="scheduled"} 1`,
		`hookd_attempts_total{outcome="redirect",trigger="scheduled"} 0`,
		`hookd_attempts_total{outcome="throttled",trigger="manual"} 1`,
		"# TYPE hookd_attempt_duration_seconds histogram",
		`hookd_attempt_duration_seconds_bucket{le="0.005"} 3`, // 0, 3 ms and the manual attempt's 0
		`hookd_attempt_duration_seconds_bucket{le="0.01"} 4`,  // bounds are inclusive
		`hookd_attempt_duration_seconds_bucket{le="15"} 4`,
		`hookd_attempt_duration_seconds_bucket{le="30"} 5`,
		`hookd_attempt_duration_seconds_bucket{le="+Inf"} 6`,
		`hookd_attempt_duration_seconds_count 6`,
		"# TYPE hookd_deliveries_total counter",
		`hookd_deliveries_total{status="delivered"} 1`, // the manual attempt ends nothing
		`hookd_deliveries_total{status="failed"} 1`,
		`hookd_deliveries_total{status="cancelled"} 1`,
	)
	var sum float64
	if _, err := fmt.Sscan(strings.SplitN(strings.SplitN(out, "hookd_attempt_duration_seconds_sum ", 2)[1], "\n", 2)[0], &sum); err != nil || math.Abs(sum-60.013) > 1e-9 {
		t.Errorf("duration sum %v (%v), want 60.013", sum, err)
	}
}

func TestBacklog(t *testing.T) {
	t.Parallel()
	b := backlog{pending: []hookd.PendingEndpoint{
		{EndpointID: "ep_1", AppID: "app_1", Pending: 3, Oldest: now.Add(-90 * time.Second)},
		{EndpointID: "ep_2", AppID: `app_"2"\`, Pending: 2, Oldest: now.Add(-30 * time.Second)},
		{EndpointID: "ep_3", AppID: "app_3", Pending: 1, Oldest: now.Add(time.Second)}, // clock skew
	}}
	out := scrape(t, metrics.New(b, &metrics.Config{Now: func() time.Time { return now }}))
	has(t, out,
		"# TYPE hookd_pending_deliveries gauge",
		"hookd_pending_deliveries 6",
		"hookd_oldest_pending_seconds 90",
		`hookd_endpoint_pending_deliveries{app_id="app_1",endpoint_id="ep_1"} 3`,
		`hookd_endpoint_pending_deliveries{app_id="app_\"2\"\\",endpoint_id="ep_2"} 2`,
		`hookd_endpoint_oldest_pending_seconds{app_id="app_1",endpoint_id="ep_1"} 90`,
		`hookd_endpoint_oldest_pending_seconds{app_id="app_3",endpoint_id="ep_3"} 0`,
		"hookd_store_up 1",
	)

	// Capped: the endpoints with the oldest backlog keep their series, the totals count all.
	capped := scrape(t, metrics.New(b, &metrics.Config{MaxEndpoints: 2, Now: func() time.Time { return now }}))
	has(t, capped, "hookd_pending_deliveries 6", `hookd_endpoint_pending_deliveries{app_id="app_1",endpoint_id="ep_1"} 3`)
	if strings.Contains(capped, `endpoint_id="ep_3"`) {
		t.Errorf("ep_3 has series beyond the cap:\n%s", capped)
	}

	empty := scrape(t, metrics.New(backlog{}, nil))
	has(t, empty, "hookd_pending_deliveries 0", "hookd_oldest_pending_seconds 0", "hookd_store_up 1")
}

func TestBacklogUnreadable(t *testing.T) {
	t.Parallel()
	out := scrape(t, metrics.New(backlog{err: errors.New("database is locked")}, nil))
	has(t, out, "hookd_store_up 0", `hookd_attempts_total{outcome="success",trigger="scheduled"} 0`)
	if strings.Contains(out, "hookd_pending_deliveries") {
		t.Errorf("backlog families without a backlog:\n%s", out)
	}
}

func TestMethods(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: status %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/metrics", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Fatalf("HEAD: status %d, %d bytes", rec.Code, rec.Body.Len())
	}
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	// A test binary is built from this source, not a tagged module, and records no VCS revision:
	// its version is the release the source is.
	want := fmt.Sprintf(`hookd_build_info{goversion="%s",revision="unknown",version="%s"} 1`, runtime.Version(), buildinfo.Release)
	for name, m := range map[string]*metrics.Metrics{
		"no backlog":         metrics.New(nil, nil),
		"unreadable backlog": metrics.New(backlog{err: errors.New("database is locked")}, nil),
	} {
		out := scrape(t, m)
		has(t, out, "# TYPE hookd_build_info gauge", want)
		if n := strings.Count(out, "\nhookd_build_info{"); n != 1 {
			t.Errorf("%s: %d hookd_build_info samples, want 1", name, n)
		}
	}
}

func TestRetentionCounter(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	has(t, scrape(t, m),
		"# TYPE hookd_retention_deleted_total counter",
		`hookd_retention_deleted_total{kind="messages"} 0`,
	)
	deleted := hookd.RetentionCount{Messages: 3, Deliveries: 5, Attempts: 7}
	m.CountRetention(func() hookd.RetentionCount { return deleted })
	has(t, scrape(t, m),
		`hookd_retention_deleted_total{kind="attempts"} 7`,
		`hookd_retention_deleted_total{kind="deliveries"} 5`,
		`hookd_retention_deleted_total{kind="messages"} 3`,
	)
}
