package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/metrics"
)

// BenchmarkOnAttempt is the cost a recorded attempt pays for its counters, from parallel workers.
func BenchmarkOnAttempt(b *testing.B) {
	m := metrics.New(nil, nil)
	a := &hookd.Attempt{Trigger: hookd.TriggerScheduled, StatusCode: 200, Success: true, Duration: 3 * time.Millisecond}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.OnAttempt(a, hookd.DeliveryDelivered)
		}
	})
}

// BenchmarkScrape is one scrape without a backlog: what a Prometheus server costs each interval.
func BenchmarkScrape(b *testing.B) {
	m := metrics.New(nil, nil)
	for b.Loop() {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	}
}
