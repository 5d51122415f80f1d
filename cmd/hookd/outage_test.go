package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
// delivers them. While it is down, sends answer 503 with a JSON error (never a 500, never a hang);
// afterwards they succeed again, the workers resume by themselves, and every accepted message is
// delivered. It stops the machine's PostgreSQL, so it runs alone: HOOKD_OUTAGE_TEST=1 (.ci/run
// runs it in a step of its own), with pg_ctlcluster on the PATH.
func TestPostgresOutage(t *testing.T) {
	if os.Getenv("HOOKD_OUTAGE_TEST") == "" {
		t.Skip("set HOOKD_OUTAGE_TEST=1 to stop PostgreSQL for 10 s under load (it must run alone; .ci/run does)")
	}
	versions, _ := filepath.Glob("/etc/postgresql/*")
	if len(versions) != 1 {
		t.Skipf("want one PostgreSQL cluster under /etc/postgresql, found %v", versions)
	}
	cluster := func(action string) {
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", filepath.Base(versions[0]), "main", action, "-m", "fast").CombinedOutput()
		if err != nil && action == "stop" {
			t.Fatalf("pg_ctlcluster stop: %v\n%s", err, out)
		}
	}
	pgStart := func() {
		_, _ = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", filepath.Base(versions[0]), "main", "start").CombinedOutput()
		for range 60 {
			if exec.Command("pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q").Run() == nil {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatal("PostgreSQL did not come back within 30 s")
	}
	t.Cleanup(pgStart) // whatever happens, the server runs again for the tests after this one

	dbURL := freshDatabase(t)
	bin := buildHookd(t)
	recv := newFleetReceiver()
	defer recv.srv.Close()
	p := startProcess(t, bin, "--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s")
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
	down.Store(true)
	cluster("stop")
	time.Sleep(10 * time.Second)
	pgStart()
	down.Store(false)
	time.Sleep(5 * time.Second)
	close(stop)
	wg.Wait()

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
