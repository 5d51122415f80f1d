//go:build linux

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/internal/fsfault"
)

// TestServeSQLiteReadOnly: "hookd serve" on an SQLite file it could only read stops at start-up
// with exit 1 and a message that says the database is read-only and to check the permissions;
// before, a read-only file started, and every write answered 500.
func TestServeSQLiteReadOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range fsfault.ReadOnlyDatabases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := tc.Make(t, dir)
			r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--db", "sqlite:"+path, "--token", testAdminToken)
			if r.code != exitFailure || !strings.Contains(r.stderr, "the database is read-only") ||
				!strings.Contains(r.stderr, "permissions") || !strings.Contains(r.stderr, "hint: ") {
				t.Fatalf("serve on a read-only database: exit %d, stderr:\n%s\nwant exit 1, a message that it is read-only, to check the permissions, and a hint", r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "listening on") {
				t.Fatalf("serve listened on a read-only database:\n%s", r.stderr)
			}
		})
	}
}

// TestServeSQLiteDiskFull runs "hookd serve" on a 16 MiB tmpfs and fills it for real (a file
// written beside the database until ENOSPC). While it is full, sends answer 503 with Retry-After
// and a JSON error, never 500; reads answer. Once the file is removed, sends are accepted again
// and the workers finish every delivery, without a restart. See serveOutage for what else it
// checks. It mounts, so it needs root (or CAP_SYS_ADMIN) and skips without.
func TestServeSQLiteDiskFull(t *testing.T) {
	t.Parallel()
	dir := fsfault.MountTmpfs(t, "16m")
	filler := filepath.Join(dir, "filler")
	serveOutage(t, filepath.Join(dir, "hookd.db"),
		func() error { return fsfault.Fill(filler) },
		func() error { return os.Remove(filler) })
}

// TestServeSQLiteUnwritable takes write access away from the database of a running "hookd serve":
// the immutable attribute (chattr +i) on the file and its -wal makes the kernel refuse writes
// through the descriptors hookd holds (ext4 does; the test checks first), as a file system gone
// read-only does.
// Sends answer 503, never 500; with the attribute removed, they are accepted again without a
// restart. It needs root and a file system with the attribute, and skips without. (A file system
// the kernel remounts read-only after I/O errors cannot be made writable while files on it are
// open: that outage needs a restart of hookd, and is not simulated.)
func TestServeSQLiteUnwritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	immutable := fsfault.Immutable(t, filepath.Join(dir, "probe"), path, path+"-wal")
	serveOutage(t, path, func() error { return immutable(true) }, func() error { return immutable(false) })
}

// serveOutage runs "hookd serve" on the SQLite file at path and takes it through an outage of the
// file: 20 sends accepted, to an endpoint limited to 10 a second so that their deliveries run on
// through the outage; breakIt; for at least 10 s, sends until five answer 503 (each with
// Retry-After and a JSON error; none may answer anything but 202 or 503), while GET
// /api/v1/health answers non-2xx within 10 s naming the part that failed, hookd_store_up reads 0,
// a list still answers 200 and the workers' writes fail; fixIt; health answers 2xx again within
// 10 s and hookd_store_up 1; 20 sends accepted at once. Then every accepted message reaches the
// receiver on 127.0.0.1 and its delivery is recorded as delivered (the workers resumed by
// themselves); the log from breakIt on holds, for each cause, at most a line when it began, one
// when it ended and a summary every 30 s (checkOutageLines); hookd stops cleanly on SIGTERM, and
// the file passes PRAGMA integrity_check and holds exactly the accepted messages (by their
// eventId), each with its delivery. The file holds only the role all: split roles need PostgreSQL.
func serveOutage(t *testing.T, path string, breakIt, fixIt func() error) {
	t.Helper()
	bin := buildHookd(t)
	recv := newFleetReceiver()
	t.Cleanup(recv.srv.Close)
	p := startProcessAt(t, bin, "info", "--db", "sqlite:"+path, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s")
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"outage","uid":"outage"}`)
	if code, body := healthOf(p.url); code != http.StatusOK {
		t.Fatalf("health before the outage: %d %s", code, body)
	}
	// At 10 a second, the deliveries of the sends before the outage are still running during it:
	// the workers' writes (attempts, throttled jobs put off) fail too.
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/outage/endpoint", testAdminToken, fmt.Sprintf(`{"url":"%s/o","rateLimit":10}`, recv.srv.URL))

	client := &http.Client{Timeout: 20 * time.Second}
	pad := strings.Repeat("x", 2000)
	accepted := map[string]string{} // eventId -> message id
	statuses := map[string]map[int]int{"before": {}, "down": {}, "after": {}}
	seq := 0
	send := func(phase string) int {
		t.Helper()
		seq++
		eventID := fmt.Sprintf("seq-%d", seq)
		req, err := http.NewRequest(http.MethodPost, p.url+"/api/v1/app/outage/msg",
			strings.NewReader(fmt.Sprintf(`{"eventType":"outage.test","eventId":%q,"payload":{"seq":%d,"pad":%q}}`, eventID, seq, pad)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("send %d (%s) got no answer: %v", seq, phase, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses[phase][resp.StatusCode]++
		var out struct{ ID, Code string }
		decodeErr := json.Unmarshal(body, &out)
		switch {
		case resp.StatusCode == http.StatusAccepted && out.ID != "":
			accepted[eventID] = out.ID
		case resp.StatusCode == http.StatusServiceUnavailable && decodeErr == nil && out.Code != "" && resp.Header.Get("Retry-After") != "":
		default:
			t.Errorf("send %d (%s): %d %v %s; want 202 with an id, or 503 with Retry-After and a JSON error", seq, phase, resp.StatusCode, resp.Header, body)
		}
		return resp.StatusCode
	}

	for range 20 {
		if code := send("before"); code != http.StatusAccepted {
			t.Fatalf("send before the outage: %d", code)
		}
	}
	if err := breakIt(); err != nil {
		t.Fatalf("break the file: %v", err)
	}
	// For 10 s, sends until five answer 503; health goes non-2xx within healthBound, naming the
	// part that failed, and hookd_store_up 0; the log has a line when each cause began, not one
	// per failure.
	began, logFrom := time.Now(), lineCount(p)
	var red time.Duration // when health first answered non-2xx; 0: not yet
	redBody := ""
	for statuses["down"][http.StatusServiceUnavailable] < 5 || time.Since(began) < 10*time.Second || red == 0 {
		if t.Failed() || time.Since(began) > 20*time.Second {
			t.Fatalf("sends while the file was broken, for %s: %v (status: count), want five 503s; health non-2xx after %s (0: never): %s",
				time.Since(began).Round(time.Millisecond), statuses["down"], red, redBody)
		}
		send("down")
		if red == 0 {
			if code, body := healthOf(p.url); code < 200 || code > 299 {
				red, redBody = time.Since(began), fmt.Sprintf("%d %s", code, body)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("health answered non-2xx %s after the file broke: %s", red.Round(100*time.Millisecond), redBody)
	if red > healthBound || !strings.Contains(redBody, `"status":"error","reason":`) {
		t.Errorf("health answered %s %s after the file broke; want non-2xx within %s naming the part that failed", redBody, red, healthBound)
	}
	waitStoreUp(t, p.url, "0")
	mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app/outage/msg?limit=5", testAdminToken, "")
	workerFailures := 0
	for _, l := range strings.Split(p.log(), "\n") {
		if strings.Contains(l, "record attempts") || strings.Contains(l, "hookd job failed") || strings.Contains(l, "write job outcomes") || strings.Contains(l, "jobs failing") {
			workerFailures++
		}
	}
	if workerFailures == 0 {
		t.Errorf("no write of the workers failed during the outage: the test did not exercise them\n%s", p.log())
	}
	if err := fixIt(); err != nil {
		t.Fatalf("fix the file: %v", err)
	}
	fixed := time.Now()
	watchHealth(map[string]*fleetProcess{"hookd serve": p}).waitFor(t, "the file mended", fixed, true)
	waitStoreUp(t, p.url, "1")
	for range 20 {
		if code := send("after"); code != http.StatusAccepted {
			t.Fatalf("send after the outage: %d", code)
		}
	}
	t.Logf("sends before: %v; while the file was broken: %v; after: %v (status: count); %d lines of the workers' failed writes in hookd's log",
		statuses["before"], statuses["down"], statuses["after"], workerFailures)
	for _, l := range strings.Split(p.log(), "\n") {
		if strings.Contains(l, "API: database unavailable") {
			t.Logf("the refused sends, in hookd's log: %s", l)
			break
		}
	}

	// Every accepted message arrives, and its delivery is recorded: the workers resumed.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		recv.mu.Lock()
		missing := 0
		for _, id := range accepted {
			if recv.seen["/o "+id] == 0 {
				missing++
			}
		}
		recv.mu.Unlock()
		var open, jobs int
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM hookd_deliveries WHERE status != 'delivered'),
			(SELECT count(*) FROM hookd_jobs)`).Scan(&open, &jobs); err != nil {
			t.Fatal(err)
		}
		if missing == 0 && open == 0 && jobs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s after the outage: %d of %d accepted messages never arrived; %d deliveries not recorded as delivered; %d jobs left\n%s",
				missing, len(accepted), open, jobs, p.log())
		}
	}
	db.Close()
	_, repeats := recv.distinct()
	t.Logf("every accepted message arrived and was recorded; %d repeated requests at the receiver", repeats)

	// The log of the outage, until every delivery was done: for each cause one line when it
	// began, one when it ended, a summary every 30 s.
	lasted := fixed.Sub(began)
	all, outages := checkOutageLines(t, "hookd serve", linesSince(p, logFrom), lasted)
	t.Logf("%d lines logged from the file breaking to every delivery done, %d of them of outages (an outage of %s)", all, outages, lasted.Round(time.Second))

	// hookd stops cleanly, and leaves the file intact, holding the accepted messages and no other.
	p.terminate(t, 30*time.Second)
	db, err = sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := make([]string, 0, len(accepted))
	for id := range accepted {
		ids = append(ids, id)
	}
	fsfault.CheckHolds(t, db, ids)
}
