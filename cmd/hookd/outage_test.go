package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPostgresOutage stops the PostgreSQL server for 10 s while "hookd serve" takes messages and
// delivers them, with a process of each role on the database: all (which takes the sends), api
// and worker. While it is down, sends answer 503 with a JSON error (never a 500, never a hang),
// GET /api/v1/health of every process answers non-2xx within 10 s, and hookd_store_up reads 0;
// afterwards health answers 2xx again within 10 s of the server's return, sends succeed, the
// workers resume by themselves, and every accepted message is delivered. Each process logs, for
// each cause, at most a line when it began, one when it ended and a summary every 30 s.
//
// It stops the machine's PostgreSQL (pg_ctlcluster, the one cluster under /etc/postgresql), so
// it runs alone: HOOKD_OUTAGE_TEST=1 (.ci/run runs it in a step of its own). With
// HOOKD_OUTAGE_PGDATA set to a cluster's data directory, it stops and starts that cluster with
// pg_ctl instead (as the user postgres when run as root): a private cluster, whose port (in its
// postgresql.conf) HOOKD_TEST_POSTGRES_URL names.
func TestPostgresOutage(t *testing.T) {
	if os.Getenv("HOOKD_OUTAGE_TEST") == "" {
		t.Skip("set HOOKD_OUTAGE_TEST=1 to stop PostgreSQL for 10 s under load (it must run alone; .ci/run does)")
	}
	cluster, pgStart := outageCluster(t)
	t.Cleanup(pgStart) // whatever happens, the server runs again for the tests after this one

	dbURL := freshDatabase(t)
	bin := buildHookd(t)
	recv := newFleetReceiver()
	defer recv.srv.Close()
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s"}
	p := startProcessAt(t, bin, "info", common...)
	procs := map[string]*fleetProcess{
		"all":    p,
		"api":    startProcessAt(t, bin, "info", append([]string{"--role", "api"}, common...)...),
		"worker": startProcessAt(t, bin, "info", append([]string{"--role", "worker"}, common...)...),
	}
	health := watchHealth(procs)
	health.waitFor(t, "before the outage", time.Now(), true)
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"outage","uid":"outage"}`)
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/outage/endpoint", testAdminToken, fmt.Sprintf(`{"url":"%s/o"}`, recv.srv.URL))

	var (
		down     atomic.Bool
		mu       sync.Mutex
		statuses = map[string]map[int]int{"send while up": {}, "send while down": {}, "read while up": {}, "read while down": {}}
		accepted = map[string]bool{} // message ids
		slowest  time.Duration
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 20 * time.Second}
	// keepCalling makes the call (a body of "" for none) until stop, counting the answers under
	// what+" while up" or what+" while down".
	keepCalling := func(what, method, url string, body func(i int) string, pause time.Duration) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			phase := what + " while up"
			if down.Load() {
				phase = what + " while down"
			}
			status, id, took, ok := callDuringOutage(t, client, method, url, body(i))
			if !ok {
				return
			}
			mu.Lock()
			statuses[phase][status]++
			slowest = max(slowest, took)
			if id != "" {
				accepted[id] = true
			}
			mu.Unlock()
			time.Sleep(pause)
		}
	}
	for w := range 4 {
		wg.Go(func() {
			keepCalling("send", http.MethodPost, p.url+"/api/v1/app/outage/msg", func(i int) string {
				return fmt.Sprintf(`{"eventType":"outage.test","payload":{"w":%d,"i":%d}}`, w, i)
			}, 20*time.Millisecond)
		})
	}
	// A reader lists the messages meanwhile: reads answer 503 too while the server is down.
	wg.Go(func() {
		keepCalling("read", http.MethodGet, p.url+"/api/v1/app/outage/msg?limit=10", func(int) string { return "" }, 50*time.Millisecond)
	})
	time.Sleep(3 * time.Second)
	logFrom := map[string]int{}
	for name, q := range procs {
		logFrom[name] = lineCount(q)
	}
	down.Store(true)
	cluster("stop")
	stopped := time.Now()
	for name, body := range health.waitFor(t, "PostgreSQL stopped", stopped, false) {
		if !strings.Contains(body, `"database":{"status":"error","reason":`) {
			t.Errorf("health of %s with PostgreSQL stopped: %s, want the database named", name, body)
		}
	}
	waitStoreUp(t, p.url, "0")
	time.Sleep(time.Until(stopped.Add(10 * time.Second)))
	pgStart()
	down.Store(false)
	started := time.Now()
	health.waitFor(t, "PostgreSQL back", started, true)
	waitStoreUp(t, p.url, "1")
	time.Sleep(time.Until(started.Add(5 * time.Second)))
	close(stop)
	wg.Wait()
	for name, q := range procs {
		all, outages := checkOutageLines(t, "hookd serve --role "+name, linesSince(q, logFrom[name]), started.Sub(stopped))
		t.Logf("hookd serve --role %s logged %d lines from the stop to 5 s after the return, %d of them of outages", name, all, outages)
	}

	mu.Lock()
	defer mu.Unlock()
	t.Logf("sends while up: %v; while down: %v; reads while up: %v; while down: %v (status: count); slowest answer %s; %d accepted",
		statuses["send while up"], statuses["send while down"], statuses["read while up"], statuses["read while down"], slowest.Round(time.Millisecond), len(accepted))
	faults := 0
	for phase, byCode := range statuses {
		if n := byCode[http.StatusInternalServerError]; n > 0 {
			faults += n
			t.Errorf("%d answers of 500 (%s)", n, phase)
		}
	}
	if faults > 0 {
		// The server's log says why, one line each (CI keeps only this file's lines).
		for _, l := range strings.Split(p.log(), "\n") {
			if strings.Contains(l, "request failed") && !strings.Contains(l, "database unavailable") {
				t.Errorf("logged: %s", l)
			}
		}
	}
	for _, phase := range []string{"send while down", "read while down"} {
		if statuses[phase][http.StatusServiceUnavailable] == 0 {
			t.Errorf("no answer of 503 (%s): %v", phase, statuses[phase])
		}
	}
	if statuses["send while up"][http.StatusAccepted] == 0 {
		t.Error("no send was accepted")
	}
	// Every accepted message arrives: the workers resumed by themselves.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		recv.mu.Lock()
		missing := 0
		for id := range accepted {
			if recv.seen["/o "+id] == 0 {
				missing++
			}
		}
		recv.mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d accepted messages never arrived", missing, len(accepted))
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, repeats := recv.distinct()
	t.Logf("every accepted message arrived; %d duplicates at the receiver", repeats)
}

// outageCluster returns how to stop the PostgreSQL cluster the test takes away (action "stop")
// and how to start it again and wait until it answers: HOOKD_OUTAGE_PGDATA's with pg_ctl, else
// the machine's one cluster with pg_ctlcluster. It skips the test when neither can be had.
func outageCluster(t *testing.T) (cluster func(action string), start func()) {
	t.Helper()
	pgURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to the PostgreSQL the test stops")
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatalf("HOOKD_TEST_POSTGRES_URL: %v", err)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	var run func(action string) ([]byte, error)
	if data := os.Getenv("HOOKD_OUTAGE_PGDATA"); data != "" {
		pgCtl, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(pgCtl) == 0 {
			t.Skip("HOOKD_OUTAGE_PGDATA is set but no pg_ctl is under /usr/lib/postgresql/*/bin")
		}
		run = func(action string) ([]byte, error) {
			args := []string{pgCtl[len(pgCtl)-1], "-D", data, "-w", action}
			if action == "stop" {
				args = append(args, "-m", "fast")
			} else {
				args = append(args, "-l", filepath.Join(data, "hookd-outage-test.log"))
			}
			if os.Geteuid() == 0 {
				args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
			}
			return exec.Command(args[0], args[1:]...).CombinedOutput()
		}
	} else {
		versions, _ := filepath.Glob("/etc/postgresql/*")
		if len(versions) != 1 {
			t.Skipf("want one PostgreSQL cluster under /etc/postgresql, found %v (or set HOOKD_OUTAGE_PGDATA)", versions)
		}
		run = func(action string) ([]byte, error) {
			args := []string{"--skip-systemctl-redirect", filepath.Base(versions[0]), "main", action}
			if action == "stop" {
				args = append(args, "-m", "fast")
			}
			return exec.Command("pg_ctlcluster", args...).CombinedOutput()
		}
	}
	cluster = func(action string) {
		if out, err := run(action); err != nil && action == "stop" {
			t.Fatalf("stop PostgreSQL: %v\n%s", err, out)
		}
	}
	start = func() {
		_, _ = run("start")
		for range 60 {
			if exec.Command("pg_isready", "-h", host, "-p", port, "-q").Run() == nil {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatal("PostgreSQL did not come back within 30 s")
	}
	return cluster, start
}

// callDuringOutage calls hookd serve's url as the admin, with body when it is not "", and
// returns the status, the message id of a 202 and how long the answer took; ok is false when no
// answer came. An answer of 400 or more without a JSON error fails the test.
func callDuringOutage(t *testing.T, client *http.Client, method, url, body string) (status int, id string, took time.Duration, ok bool) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	began := time.Now()
	resp, err := client.Do(req)
	took = time.Since(began)
	if err != nil {
		t.Errorf("a %s failed without an answer after %s: %v", method, took, err)
		return 0, "", took, false
	}
	var out struct {
		ID   string `json:"id"`
		Code string `json:"code"`
	}
	decodeErr := json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode >= 400 && (decodeErr != nil || out.Code == "") {
		t.Errorf("a %d without a JSON error", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusAccepted {
		out.ID = ""
	}
	return resp.StatusCode, out.ID, took, true
}
