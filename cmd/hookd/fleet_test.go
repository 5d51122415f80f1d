package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// fleetReceiver counts requests by message and endpoint path; it answers 204 to every one, but
// for those its refuse function turns down (see newFlakyReceiver).
type fleetReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	seen     map[string]int // "path msg_id" -> requests answered 204
	refused  map[string]int // "path msg_id" -> requests answered 503
	requests atomic.Int64   // every request, refused ones included
}

func newFleetReceiver() *fleetReceiver { return newFlakyReceiver(nil) }

// newFlakyReceiver is newFleetReceiver whose receiver answers 503 to a request when refuse (nil:
// never) returns true for its path and the number of requests for its path and message refused
// so far. A refused request is not in seen.
func newFlakyReceiver(refuse func(path string, refused int) bool) *fleetReceiver {
	return newSlowReceiver(0, refuse)
}

// newSlowReceiver is newFlakyReceiver whose receiver waits delay before it answers.
func newSlowReceiver(delay time.Duration, refuse func(path string, refused int) bool) *fleetReceiver {
	r := &fleetReceiver{seen: map[string]int{}, refused: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		time.Sleep(delay)
		key := req.URL.Path + " " + req.Header.Get("webhook-id")
		r.mu.Lock()
		if refuse != nil && refuse(req.URL.Path, r.refused[key]) {
			r.refused[key]++
			r.mu.Unlock()
			r.requests.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.seen[key]++
		r.mu.Unlock()
		r.requests.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

// distinct returns how many message-endpoint pairs arrived, and how many requests repeated one.
func (r *fleetReceiver) distinct() (pairs, repeats int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.seen {
		pairs++
		repeats += n - 1
	}
	return pairs, repeats
}

// freshDatabase creates a database of its own on the server of HOOKD_TEST_POSTGRES_URL and
// returns its URL; it is dropped when the test ends.
func freshDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run the multi-process test")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect %s: %v", redact.URL(base), err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "hookd_fleet_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// fleetProcess is one "hookd serve" child process.
type fleetProcess struct {
	cmd   *exec.Cmd
	url   string
	mu    sync.Mutex
	lines []string
	ended chan struct{}
}

// terminate stops p with SIGTERM and fails t unless it exits cleanly within the given time.
func (p *fleetProcess) terminate(t testing.TB, within time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.ended:
	case <-time.After(within):
		t.Fatalf("hookd serve still running %s after SIGTERM:\n%s", within, p.log())
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("hookd serve after SIGTERM: %v\n%s", err, p.log())
	}
}

func (p *fleetProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// hookdBinary is this command's binary, built once for every test of the package that runs it
// (buildHookd), in a directory TestMain removes.
var hookdBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildHookd returns the path of this command's binary, building it at the first call.
func buildHookd(t testing.TB) string {
	t.Helper()
	b := &hookdBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "hookd-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "hookd")
		if out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", b.path, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// TestMain removes the binary buildHookd built, once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if hookdBinary.dir != "" {
		_ = os.RemoveAll(hookdBinary.dir)
	}
	os.Exit(code)
}

// startProcess starts bin serve with args, logging at warn, and waits until it listens. When
// the test ends, it kills it and checks its stderr for secrets (checkServeLogs).
func startProcess(t testing.TB, bin string, args ...string) *fleetProcess {
	t.Helper()
	return startProcessAt(t, bin, "warn", args...)
}

// startProcessAt is startProcess logging at level (HOOKD_LOG_LEVEL).
func startProcessAt(t testing.TB, bin, level string, args ...string) *fleetProcess {
	t.Helper()
	p := &fleetProcess{cmd: exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...), ended: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "HOOKD_LOG_LEVEL="+level)
	secrets := serveSecrets(args)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.ended
		_ = p.cmd.Wait()
		checkServeLogs(t, "hookd serve's stderr", p.log(), secrets)
	})
	listening := make(chan string, 1)
	go func() {
		defer close(p.ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
	}()
	select {
	case p.url = <-listening:
		return p
	case <-p.ended:
		t.Fatalf("hookd serve %v exited before listening:\n%s", args, p.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("hookd serve %v not listening after 60 s:\n%s", args, p.log())
	}
	return nil
}

// TestFleetSurvivesSIGKILL runs one API process and two worker processes on one PostgreSQL
// database, sends 5,000 deliveries, kills one worker with SIGKILL halfway, and checks that every
// delivery completes, that no attempt is recorded twice for the same try, and that the receiver
// saw at most as many repeated requests as the killed worker had attempts in flight.
func TestFleetSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes for about a minute")
	}
	dbURL := freshDatabase(t)
	bin := buildHookd(t)
	recv := newFleetReceiver()
	defer recv.srv.Close()

	const (
		endpoints = 10
		messages  = 500 // x endpoints = 5,000 deliveries
		workers   = 16  // first-lane workers of each worker process
	)
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s"}
	api := startProcess(t, bin, append([]string{"--role", "api"}, common...)...)
	w1 := startProcess(t, bin, append([]string{"--role", "worker", "--workers", fmt.Sprint(workers)}, common...)...)
	w2 := startProcess(t, bin, append([]string{"--role", "worker", "--workers", fmt.Sprint(workers)}, common...)...)
	mustCall(t, http.StatusOK, http.MethodGet, w1.url+"/api/v1/health", "", "")
	mustCall(t, http.StatusNoContent, http.MethodGet, w1.url+"/api/v1/health/ping", "", "")
	if code, _ := call(t, http.MethodGet, w1.url+"/api/v1/app", testAdminToken, ""); code != http.StatusNotFound {
		t.Errorf("a worker process answers the API: GET /api/v1/app is %d, want 404", code)
	}

	mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app", testAdminToken, `{"name":"fleet","uid":"fleet"}`)
	for i := range endpoints {
		mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app/fleet/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s/ep%d"}`, recv.srv.URL, i))
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := p; i < messages; i += 8 {
				mustCall(t, http.StatusAccepted, http.MethodPost, api.url+"/api/v1/app/fleet/msg", testAdminToken,
					fmt.Sprintf(`{"eventType":"fleet.test","payload":{"seq":%d}}`, i))
				sent.Add(1)
			}
		})
	}

	total := endpoints * messages
	deadline := time.Now().Add(60 * time.Second)
	for recv.requests.Load() < int64(total/2) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d requests after 60 s; worker logs:\n%s\n%s", recv.requests.Load(), w1.log(), w2.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	atKill := recv.requests.Load()
	wg.Wait()

	// The killed worker's jobs come back when their leases run out (the job timeout and 30 s,
	// about a minute here), on the surviving worker.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var delivered, twice int
	deadline = time.Now().Add(4 * time.Minute)
	for {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM hookd_deliveries WHERE status = 'delivered'`).Scan(&delivered); err != nil {
			t.Fatal(err)
		}
		if delivered == total || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if pairs, _ := recv.distinct(); pairs != total {
		t.Errorf("%d of %d deliveries arrived at the receiver", pairs, total)
	}
	if delivered != total {
		t.Errorf("%d deliveries recorded delivered, want %d", delivered, total)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT delivery_id, number FROM hookd_attempts
		GROUP BY delivery_id, number HAVING count(*) > 1) AS d`).Scan(&twice); err != nil {
		t.Fatal(err)
	}
	if twice != 0 {
		t.Errorf("%d tries have more than one attempt recorded", twice)
	}
	_, repeats := recv.distinct()
	t.Logf("5,000 deliveries, worker 1 killed after %d requests: %d repeated requests at the receiver (the killed worker had at most %d attempts in flight)", atKill, repeats, workers)
	if repeats > workers {
		t.Errorf("%d repeated requests at the receiver, more than the %d attempts the killed worker could have had in flight", repeats, workers)
	}
}

// capReceiver holds each request for hold (or until the test ends, or the client goes away),
// counting the requests in flight at once. A request leaves the count before its answer is
// written, so the next attempt on the same slot never overlaps it in the count.
type capReceiver struct {
	srv       *httptest.Server
	now, most atomic.Int32
	requests  atomic.Int32
}

func newCapReceiver(t *testing.T, hold time.Duration) *capReceiver {
	r := &capReceiver{}
	done := make(chan struct{})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Read to the end, so that the server watches the connection and ends the request's
		// context when the client goes away (a killed process).
		_, _ = io.Copy(io.Discard, req.Body)
		r.requests.Add(1)
		n := r.now.Add(1)
		for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
		}
		select {
		case <-time.After(hold):
		case <-done:
		case <-req.Context().Done():
		}
		r.now.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() {
		close(done)
		r.srv.Close()
	})
	return r
}

// fleetQueue returns the queue flags of a fleet test: none for the database's own queue, or
// the Redis of HOOKD_TEST_REDIS_URL in a namespace of the test's own, deleted when it ends.
func fleetQueue(t *testing.T, redisQueue bool) []string {
	t.Helper()
	if !redisQueue {
		return nil
	}
	u := os.Getenv("HOOKD_TEST_REDIS_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_REDIS_URL is unset: set it to a Redis URL (e.g. redis://127.0.0.1:6379/0) to run the fleet test on the Redis queue")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	ns := "fleet_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		o, err := redis.ParseURL(u)
		if err != nil {
			return
		}
		c := redis.NewClient(o)
		defer c.Close()
		ctx := context.Background()
		for _, pattern := range []string{"asynq:{" + ns + ":*", "hookd:{" + ns + "}:*"} {
			iter := c.Scan(ctx, 0, pattern, 500).Iterator()
			for iter.Next(ctx) {
				c.Del(ctx, iter.Val())
			}
		}
		for _, l := range []string{"first", "retry", "manual"} {
			c.SRem(ctx, "asynq:queues", ns+":"+l)
		}
	})
	return []string{"--queue", u, "--queue-namespace", ns}
}

// fleetCapEndpoint creates an application and an endpoint at url through the API process, and
// sends n messages to it.
func fleetCapEndpoint(t *testing.T, api *fleetProcess, url string, n int) {
	t.Helper()
	mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app", testAdminToken, `{"name":"cap","uid":"cap"}`)
	mustCall(t, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app/cap/endpoint", testAdminToken,
		fmt.Sprintf(`{"url":"%s/hang"}`, url))
	for i := range n {
		mustCall(t, http.StatusAccepted, http.MethodPost, api.url+"/api/v1/app/cap/msg", testAdminToken,
			fmt.Sprintf(`{"eventType":"cap.test","payload":{"seq":%d}}`, i))
	}
}

// fleetCap is hookd.Config's default MaxInFlightPerEndpoint.
const fleetCap = 8

// TestFleetCapAcrossProcesses runs two and three worker processes on one PostgreSQL database,
// on its own queue and on the Redis queue, delivering to an endpoint that takes 2 s to answer:
// the requests in flight at the receiver reach the endpoint's cap of 8 and never pass it, over
// several rounds of attempts (each process alone keeps a cap of 8: without the leases two
// processes send 16).
func TestFleetCapAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs up to four processes")
	}
	for _, tc := range []struct {
		name    string
		workers int
		redis   bool
	}{{"two workers", 2, false}, {"three workers", 3, false}, {"two workers on redis", 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			queue := fleetQueue(t, tc.redis)
			dbURL := freshDatabase(t)
			bin := buildHookd(t)
			recv := newCapReceiver(t, 2*time.Second)
			common := append([]string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "5s"}, queue...)
			api := startProcess(t, bin, append([]string{"--role", "api"}, common...)...)
			for range tc.workers {
				startProcess(t, bin, append([]string{"--role", "worker", "--workers", "20"}, common...)...)
			}
			fleetCapEndpoint(t, api, recv.srv.URL, 80)
			// Three rounds of the cap's attempts at least (80 deliveries take 20 s at 8 at once).
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) && recv.requests.Load() < 4*fleetCap {
				time.Sleep(10 * time.Millisecond)
			}
			got, n := recv.most.Load(), recv.requests.Load()
			t.Logf("%d worker processes: at most %d requests in flight to the endpoint, %d requests", tc.workers, got, n)
			if got != fleetCap || n < 4*fleetCap {
				t.Errorf("%d worker processes: at most %d requests in flight to the endpoint (%d requests in all), want its cap %d over at least %d requests",
					tc.workers, got, n, fleetCap, 4*fleetCap)
			}
		})
	}
}

// TestFleetSlotsOfAKilledWorker: a worker process that holds all of a hanging endpoint's slots
// is killed with SIGKILL; another worker, refused until then, takes the slots once the killed
// one's lease ends (--slot-lease 2s), and reaches the cap within the lease and a margin.
func TestFleetSlotsOfAKilledWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes")
	}
	t.Parallel()
	dbURL := freshDatabase(t)
	bin := buildHookd(t)
	recv := newCapReceiver(t, time.Minute)
	const lease = 2 * time.Second
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "30s", "--slot-lease", lease.String()}
	api := startProcess(t, bin, append([]string{"--role", "api"}, common...)...)
	// Few workers, so that the first process leaves most of the jobs to the second.
	first := startProcess(t, bin, append([]string{"--role", "worker", "--workers", "10"}, common...)...)
	fleetCapEndpoint(t, api, recv.srv.URL, 60)
	waitFor := func(what string, within time.Duration, ok func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !ok() {
			if time.Since(start) > within {
				t.Fatalf("%s: not within %s (%d requests in flight)", what, within, recv.now.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
		return time.Since(start)
	}
	waitFor("the first worker fills the cap", 20*time.Second, func() bool { return recv.now.Load() == fleetCap })
	startProcess(t, bin, append([]string{"--role", "worker", "--workers", "20"}, common...)...)
	time.Sleep(1500 * time.Millisecond) // the second worker's jobs come and are refused
	if got := recv.most.Load(); got != fleetCap {
		t.Fatalf("%d requests in flight with the second worker started, want the cap %d", got, fleetCap)
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor("the killed worker's requests end", 5*time.Second, func() bool { return recv.now.Load() == 0 })
	took := waitFor("the second worker takes the slots", lease+2*time.Second, func() bool { return recv.now.Load() == fleetCap })
	t.Logf("the second worker had the cap's %d slots %s after the first was killed (lease %s)", fleetCap, took.Round(time.Millisecond), lease)
	time.Sleep(500 * time.Millisecond)
	if got := recv.most.Load(); got != fleetCap {
		t.Errorf("%d requests in flight at most, want the cap %d", got, fleetCap)
	}
}
