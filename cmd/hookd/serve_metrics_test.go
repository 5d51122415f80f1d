package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

// A real hookd serve's /metrics has the Go runtime's and the process's series, the build, the
// API's requests by route pattern (not by path), and the queue's depth per lane.
func TestServeMetricsRuntimeRoutesAndQueue(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--workers", "2")
	app := mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme_route_uid"}`)
	appID := app["id"].(string)
	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/"+appID, testAdminToken, "")
	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/acme_route_uid", testAdminToken, "")
	if code, _ := call(t, http.MethodGet, s.url+"/api/v1/app/app_nobody_here", testAdminToken, ""); code != http.StatusNotFound {
		t.Fatalf("unknown app: status %d", code)
	}

	lines := []string{
		`hookd_http_requests_total{code="200",method="GET",route="GET /api/v1/app/{app_id}"} 2`,
		`hookd_http_requests_total{code="404",method="GET",route="GET /api/v1/app/{app_id}"} 1`,
		`hookd_http_requests_total{code="201",method="POST",route="POST /api/v1/app"} 1`,
		`hookd_queue_jobs{lane="first",state="due"} 0`,
		`hookd_queue_jobs{lane="retry",state="scheduled"} 0`,
		"hookd_store_up 1",
	}
	out := waitMetrics(t, s.url, lines...)
	for _, re := range []string{
		`\ngo_goroutines \d+\n`,
		`\nhookd_build_info\{goversion="` + regexp.QuoteMeta(runtime.Version()) + `",revision="[^"]*",version="` + regexp.QuoteMeta(buildinfo.Release) + `"\} 1\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("/metrics does not match %s:\n%s", re, out)
		}
	}
	if runtime.GOOS == "linux" && !regexp.MustCompile(`\nprocess_cpu_seconds_total [0-9.e+-]+\n`).MatchString(out) {
		t.Errorf("no process_cpu_seconds_total:\n%s", out)
	}
	for _, id := range []string{appID, "acme_route_uid", "app_nobody_here"} {
		if strings.Contains(out, fmt.Sprintf("route=%q", id)) || regexp.MustCompile(`hookd_http_[^\n]*`+regexp.QuoteMeta(id)).MatchString(out) {
			t.Errorf("an id of a path, %s, is in an HTTP label:\n%s", id, out)
		}
	}
	s.stop(t)
}
