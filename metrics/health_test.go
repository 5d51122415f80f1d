package metrics_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/metrics"
	"github.com/hookd/hookd/sqlite"
)

// With ReportHealth, a scrape reports each part of the health check as hookd_health_up, and
// hookd_store_up is 0 once the database takes no writes; a scrape without a store to read gives
// 0s, not an error.
func TestReportHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(store, nil)
	m.ReportHealth(client.Health)
	has(t, scrape(t, m),
		"# TYPE hookd_health_up gauge",
		`hookd_health_up{part="database"} 1`,
		`hookd_health_up{part="queue"} 1`,
		`hookd_health_up{part="workers"} 1`,
		"hookd_store_up 1")

	if err := client.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// The last probe's result stands for a second: scrape until it is out of date.
	out := scrape(t, m)
	for deadline := time.Now().Add(5 * time.Second); strings.Contains(out, `hookd_health_up{part="database"} 1`) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		out = scrape(t, m)
	}
	has(t, out,
		`hookd_health_up{part="database"} 0`,
		`hookd_health_up{part="queue"} 0`,
		"hookd_store_up 0")
	if strings.Contains(out, `part="workers"`) {
		t.Errorf("a stopped client's scrape reports workers:\n%s", out)
	}
}
