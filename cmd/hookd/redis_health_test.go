package main

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedisQueueHealth stops the Redis of "hookd serve --queue" for 10 s, a private redis-server
// on a port of the test's own: GET /api/v1/health answers non-2xx within 10 s naming the queue,
// and 2xx again within 10 s of Redis's return; sends made meanwhile are accepted (their rows are
// in SQLite; the sweeper enqueues them) and delivered; the log holds, for each cause, at most a
// line when it began, one when it ended and a summary every 30 s. It skips without redis-server.
func TestRedisQueueHealth(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on the PATH: the test runs a private one")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	r := localRedis{host: "127.0.0.1", port: port}
	var server *exec.Cmd
	startRedis := func() {
		server = exec.Command("redis-server", "--bind", r.host, "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		if err := server.Start(); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if r.up() {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the private redis-server does not answer at %s:%s", r.host, port)
	}
	startRedis()
	t.Cleanup(func() {
		_ = server.Process.Kill()
		_ = server.Wait()
	})

	bin := buildHookd(t)
	recv := newFleetReceiver()
	t.Cleanup(recv.srv.Close)
	p := startProcessAt(t, bin, "info", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"), "--queue", "redis://127.0.0.1:"+port+"/0",
		"--sweep-after", "2s", "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s")
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"redis","uid":"redis"}`)
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/redis/endpoint", testAdminToken, fmt.Sprintf(`{"url":"%s/r"}`, recv.srv.URL))
	health := watchHealth(map[string]*fleetProcess{"hookd serve --queue": p})
	health.waitFor(t, "before the outage", time.Now(), true)

	var ids []string
	send := func(i int) {
		got := mustCall(t, http.StatusAccepted, http.MethodPost, p.url+"/api/v1/app/redis/msg", testAdminToken,
			fmt.Sprintf(`{"eventType":"redis.test","payload":{"i":%d}}`, i))
		ids = append(ids, got["id"].(string))
	}
	send(0)
	logFrom := lineCount(p)
	r.stopEmpty(t)
	_ = server.Wait()
	stopped := time.Now()
	for _, body := range health.waitFor(t, "Redis stopped", stopped, false) {
		if !strings.Contains(body, `"queue":{"status":"error","reason":"Redis does not answer"}`) || !strings.Contains(body, `"database":{"status":"ok"}`) {
			t.Errorf("health with Redis stopped: %s, want the queue named, the database ok", body)
		}
	}
	for i := 1; time.Since(stopped) < 10*time.Second; i++ {
		send(i) // accepted: the rows are in SQLite, the sweeper enqueues their jobs
		time.Sleep(200 * time.Millisecond)
	}
	startRedis()
	started := time.Now()
	health.waitFor(t, "Redis back", started, true)

	// Every message arrives: the sweeper enqueued those sent while Redis was away.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		recv.mu.Lock()
		missing := 0
		for _, id := range ids {
			if recv.seen["/r "+id] == 0 {
				missing++
			}
		}
		recv.mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages never arrived\n%s", missing, len(ids), p.log())
		}
	}
	time.Sleep(time.Until(started.Add(3 * time.Second))) // the ends of the outages are logged
	all, outages := checkOutageLines(t, "hookd serve --queue", linesSince(p, logFrom), started.Sub(stopped))
	t.Logf("%d messages delivered; %d lines logged from the stop to the last delivery, %d of them of outages", len(ids), all, outages)
}
