package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/redisqueue"
	"github.com/redis/go-redis/v9"
)

// TestRedisRestartedEmpty restarts Redis empty (shutdown nosave, down for 5 s) while "hookd serve
// --queue" takes messages and delivers them to three endpoints, one of which refuses the first
// attempt of one message in four, so that retries wait in Redis too. The jobs Redis held are
// gone, and the sends made while it was down have their rows but no job: the sweeper
// (--sweep-after 2s) enqueues them again, and every accepted message reaches every endpoint.
// Sends never answer 500 (a 503 with a JSON error is allowed). It runs on SQLite, and on
// PostgreSQL when HOOKD_TEST_POSTGRES_URL is set. It restarts the machine's Redis, so it runs
// alone: HOOKD_OUTAGE_TEST=1 (.ci/run runs it in a step of its own), with redis-server and
// redis-cli on the PATH and HOOKD_TEST_REDIS_URL naming that Redis.
func TestRedisRestartedEmpty(t *testing.T) {
	if os.Getenv("HOOKD_OUTAGE_TEST") == "" {
		t.Skip("set HOOKD_OUTAGE_TEST=1 to restart Redis empty under load (it must run alone; .ci/run does)")
	}
	redisURL := os.Getenv("HOOKD_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("HOOKD_TEST_REDIS_URL is unset: set it to the machine's Redis (e.g. redis://127.0.0.1:6379/0), which this test restarts empty")
	}
	for _, tool := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on the PATH: the test stops and starts the machine's Redis with redis-cli and redis-server", tool)
		}
	}
	r := newLocalRedis(t, redisURL)
	if !r.up() {
		t.Fatalf("Redis does not answer at %s:%s", r.host, r.port)
	}
	bin := buildHookd(t)
	t.Run("sqlite", func(t *testing.T) {
		redisRestartRun(t, bin, r, redisURL, "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		redisRestartRun(t, bin, r, redisURL, freshDatabase(t))
	})
}

// localRedis is the machine's Redis server, stopped and started again as .ci/run starts it.
type localRedis struct{ host, port string }

// newLocalRedis reads the host and port of redisURL; it skips the test unless they are a
// loopback address without a password (a server this test may restart, and knows how).
func newLocalRedis(t *testing.T, redisURL string) localRedis {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil || u.Scheme != "redis" {
		t.Skipf("HOOKD_TEST_REDIS_URL is not a redis:// URL; the test restarts a local Redis")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6379"
	}
	if ip := net.ParseIP(host); ((ip == nil || !ip.IsLoopback()) && host != "localhost") || u.User != nil {
		t.Skipf("HOOKD_TEST_REDIS_URL names %s, not a loopback Redis without a password: the test restarts it with redis-server --bind %s, without a password", u.Host, host)
	}
	return localRedis{host: host, port: port}
}

func (r localRedis) cli(args ...string) (string, error) {
	out, err := exec.Command("redis-cli", append([]string{"-h", r.host, "-p", r.port}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (r localRedis) up() bool {
	out, err := r.cli("ping")
	return err == nil && out == "PONG"
}

// stopEmpty stops the server without saving its data, and waits until it no longer answers.
func (r localRedis) stopEmpty(t *testing.T) {
	t.Helper()
	if out, err := r.cli("shutdown", "nosave"); err != nil {
		t.Fatalf("redis-cli shutdown nosave: %v\n%s", err, out)
	}
	for range 100 {
		if !r.up() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("Redis still answers 10 s after shutdown nosave")
}

// ensureUp starts the server, as .ci/run does, unless it answers, and waits until it does.
func (r localRedis) ensureUp(t *testing.T) {
	t.Helper()
	if r.up() {
		return
	}
	if out, err := exec.Command("redis-server", "--daemonize", "yes", "--bind", r.host, "--port", r.port, "--save", "", "--appendonly", "no").CombinedOutput(); err != nil {
		t.Errorf("redis-server: %v\n%s", err, out)
	}
	for range 300 {
		if r.up() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("Redis does not answer at %s:%s 30 s after redis-server", r.host, r.port)
}

// redisTasks returns how many tasks of namespace ns Redis holds, in every lane and state, and
// says how many in each. It reads asynq's keys itself: asynq's Inspector knows a queue only once
// an asynq client registers it, and a client registers each queue once, not again after Redis
// restarted empty.
func redisTasks(t *testing.T, redisURL, ns string) (int, string) {
	t.Helper()
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	n, says := 0, []string{}
	for _, l := range []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual} {
		prefix := "asynq:{" + redisqueue.QueueName(ns, l) + "}:"
		pending, _ := rdb.LLen(ctx, prefix+"pending").Result()
		active, _ := rdb.LLen(ctx, prefix+"active").Result()
		scheduled, _ := rdb.ZCard(ctx, prefix+"scheduled").Result()
		retry, _ := rdb.ZCard(ctx, prefix+"retry").Result()
		n += int(pending + active + scheduled + retry)
		says = append(says, fmt.Sprintf("%s: %d pending, %d active, %d scheduled, %d retry or snoozed", l, pending, active, scheduled, retry))
	}
	return n, strings.Join(says, "; ")
}

// Phases of a send in redisRestartRun, by when it began.
const (
	phaseBefore = "before" // Redis up, before the restart
	phaseDown   = "down"   // Redis stopped
	phaseAfter  = "after"  // Redis answering again, empty
)

// sweptRE finds the jobs of a sweep in serve's log.
var sweptRE = regexp.MustCompile(`hookd sweep enqueued pending deliveries.* enqueued=(\d+)`)

// redisRestartRun runs one "hookd serve --queue" on db and restarts Redis empty under load.
func redisRestartRun(t *testing.T, bin string, r localRedis, redisURL, db string) {
	t.Cleanup(func() { r.ensureUp(t) }) // whatever happens, Redis runs again for what comes after this run
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	ns := "hookd-outage-" + hex.EncodeToString(b)
	paths := []string{"/a", "/b", "/retried"}
	// "/retried" refuses the first attempt of one message in four: the retries of those wait in
	// Redis too. Never all of them, lest ten failures in a row open the endpoint's circuit, which
	// would record the tries due meanwhile as not sent and exhaust the short schedule.
	firsts := 0
	recv := newFlakyReceiver(func(path string, refused int) bool {
		if path != "/retried" || refused > 0 {
			return false
		}
		firsts++
		return firsts%4 == 0
	})
	defer recv.srv.Close()
	p := startProcess(t, bin, "--db", db, "--queue", redisURL, "--queue-namespace", ns, "--sweep-after", "2s",
		"--retry-schedule", "1s,1s,2s,5s,10s", "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8",
		"--timeout", "5s", "--workers", "8", "--log-level", "info")
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"redis-outage","uid":"redis-outage"}`)
	for _, path := range paths {
		mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/redis-outage/endpoint", testAdminToken, fmt.Sprintf(`{"url":"%s%s"}`, recv.srv.URL, path))
	}

	var (
		phase    atomic.Value // of the sends that begin now
		mu       sync.Mutex
		statuses = map[string]map[int]int{phaseBefore: {}, phaseDown: {}, phaseAfter: {}}
		accepted = map[string]string{} // message id -> phase of its send
		slowest  time.Duration
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	phase.Store(phaseBefore)
	client := &http.Client{Timeout: 20 * time.Second}
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"eventType":"redis.outage","payload":{"w":%d,"i":%d}}`, w, i)
				ph := phase.Load().(string)
				status, id, took, ok := callDuringOutage(t, client, http.MethodPost, p.url+"/api/v1/app/redis-outage/msg", body)
				if !ok {
					return
				}
				mu.Lock()
				statuses[ph][status]++
				slowest = max(slowest, took)
				if id != "" {
					accepted[id] = ph
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	stopSending := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopSending()

	time.Sleep(4 * time.Second)
	held, _ := redisTasks(t, redisURL, ns)
	phase.Store(phaseDown)
	stoppedAt := time.Now()
	r.stopEmpty(t)
	time.Sleep(5 * time.Second)
	r.ensureUp(t)
	phase.Store(phaseAfter)
	backAt := time.Now()
	t.Logf("Redis stopped at %s, answering again (empty) at %s", stoppedAt.Format(time.StampMilli), backAt.Format(time.StampMilli))

	// missing counts the message-endpoint pairs not at the receiver, of messages whose send began
	// before Redis answered again (at risk) and of all; where says how many by phase and endpoint.
	missing := func() (atRisk, all, pairs int, where map[string]int) {
		mu.Lock()
		ids := make(map[string]string, len(accepted))
		for id, ph := range accepted {
			ids[id] = ph
		}
		mu.Unlock()
		where = map[string]int{}
		recv.mu.Lock()
		defer recv.mu.Unlock()
		for id, ph := range ids {
			for _, path := range paths {
				if recv.seen[path+" "+id] == 0 {
					where["sent "+ph+", to "+path]++
					all++
					if ph != phaseAfter {
						atRisk++
					}
				}
			}
		}
		return atRisk, all, len(ids) * len(paths), where
	}
	var recovered time.Duration // from Redis answering to every message at risk delivered
	sendUntil, deadline := backAt.Add(5*time.Second), backAt.Add(2*time.Minute)
	for {
		sending := time.Now().Before(sendUntil)
		if !sending {
			stopSending()
		}
		atRisk, all, pairs, where := missing()
		if atRisk == 0 && recovered == 0 {
			recovered = time.Since(backAt)
		}
		if !sending && all == 0 {
			break
		}
		if time.Now().After(deadline) {
			_, now := redisTasks(t, redisURL, ns)
			mu.Lock()
			sent := fmt.Sprint(statuses)
			mu.Unlock()
			t.Fatalf("lost: %d of %d message-endpoint pairs never arrived (%v), %d of them sent before Redis answered again; %d tasks in Redis when it stopped, now %s; sends by phase and status: %s; serve's log:\n%s",
				all, pairs, where, atRisk, held, now, sent, tail(p.log(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}

	mu.Lock()
	defer mu.Unlock()
	byPhase := map[string]int{}
	for _, ph := range accepted {
		byPhase[ph]++
	}
	swept := 0
	for _, m := range sweptRE.FindAllStringSubmatch(p.log(), -1) {
		n, _ := strconv.Atoi(m[1])
		swept += n
	}
	_, repeats := recv.distinct()
	t.Logf("sends before the restart: %v; while Redis was down: %v; after: %v (status: count); slowest answer %s",
		statuses[phaseBefore], statuses[phaseDown], statuses[phaseAfter], slowest.Round(time.Millisecond))
	if down := statuses[phaseDown]; down[http.StatusServiceUnavailable] > 0 {
		t.Logf("while Redis was down, %d sends answered 503 (a JSON error) and %d were accepted", down[http.StatusServiceUnavailable], down[http.StatusAccepted])
	} else {
		t.Logf("while Redis was down, every send was accepted (202): %d", down[http.StatusAccepted])
	}
	t.Logf("accepted %d messages (%d before the restart, %d while Redis was down, %d after); %d tasks in Redis when it stopped; the sweeper enqueued %d jobs",
		len(accepted), byPhase[phaseBefore], byPhase[phaseDown], byPhase[phaseAfter], held, swept)
	t.Logf("every accepted message reached every endpoint (%d pairs, lost 0); the messages sent before Redis answered again were all delivered %s after it did; %d duplicates at the receiver",
		len(accepted)*len(paths), recovered.Round(100*time.Millisecond), repeats)

	for ph, byCode := range statuses {
		for code, n := range byCode {
			if code == http.StatusAccepted || code == http.StatusServiceUnavailable {
				continue
			}
			var failed []string
			for _, l := range strings.Split(p.log(), "\n") {
				if strings.Contains(l, "request failed") {
					failed = append(failed, l)
				}
			}
			t.Errorf("%d sends answered %d (phase %s); serve's failed requests:\n%s", n, code, ph, strings.Join(failed, "\n"))
		}
	}
	if statuses[phaseBefore][http.StatusAccepted] == 0 || statuses[phaseAfter][http.StatusAccepted] == 0 {
		t.Errorf("no send was accepted before or after the restart: %v, %v", statuses[phaseBefore], statuses[phaseAfter])
	}
	if byPhase[phaseDown] == 0 && held == 0 {
		t.Error("nothing was at risk: Redis held no task when it stopped and no send was accepted while it was down")
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
