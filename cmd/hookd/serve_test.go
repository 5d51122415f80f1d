package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// syncBuffer is a bytes.Buffer that a serve goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var (
	listeningRE  = regexp.MustCompile(`(?m)^listening on (http://\S+)$`)
	adminTokenRE = regexp.MustCompile(`(?m)^admin token \(shown once, store it\): (\S+)$`)
)

// served is one "hookd serve" running in-process.
type served struct {
	url    string
	stderr *syncBuffer
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returns
	code   int           // Run's exit code, once done
}

// startServe runs "hookd serve args..." in a goroutine and waits until it listens. When the test
// ends, it stops it and checks its stderr for secrets (checkServeLogs).
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stderr: &syncBuffer{}, cancel: cancel, done: make(chan struct{})}
	secrets := serveSecrets(args)
	go func() {
		defer close(s.done)
		s.code = Run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), io.Discard, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not return 30 s after its context ended")
		}
		checkServeLogs(t, "hookd serve's stderr", s.stderr.String(), secrets)
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("serve exited %d before listening; stderr:\n%s", s.code, s.stderr)
		case <-deadline:
			t.Fatalf("serve not listening after 30 s; stderr:\n%s", s.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop cancels serve's context, as main does on SIGTERM, and asserts that it exits 0 in time.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case <-s.done:
		if s.code != exitOK {
			t.Fatalf("serve exited %d after its context ended; stderr:\n%s", s.code, s.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve still running 15 s after its context ended; stderr:\n%s", s.stderr)
	}
}

// call sends a request with the bearer token (none when empty) and returns the status and body.
func call(t testing.TB, method, url, token, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// mustCall is call that fails the test unless the status is want; it returns the body decoded.
func mustCall(t testing.TB, want int, method, url, token, body string) map[string]any {
	t.Helper()
	code, got := call(t, method, url, token, body)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, url, code, want, got)
	}
	out := map[string]any{}
	if strings.HasPrefix(strings.TrimSpace(got), "{") {
		if err := json.Unmarshal([]byte(got), &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, got)
		}
	}
	return out
}

// waitMetrics scrapes /metrics until every line is in it.
func waitMetrics(t *testing.T, url string, lines ...string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := call(t, http.MethodGet, url+"/metrics", "", "")
		missing := ""
		for _, l := range lines {
			if !strings.Contains("\n"+body, "\n"+l+"\n") {
				missing = l
				break
			}
		}
		if missing == "" {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q after 20 s:\n%s", missing, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const testAdminToken = "hookd_sk_serve_test_token_0123456789"

func TestServe(t *testing.T) {
	t.Parallel()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/fail" {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()

	s := startServe(t, "--listen", "127.0.0.1:0", "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"),
		"--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--retry-schedule", "1h",
		"--timeout", "2s", "--workers", "4", "--log-level", "debug")
	if strings.Contains(s.stderr.String(), "admin token (shown once") {
		t.Fatal("a token was generated although --token was given")
	}

	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/health/", "", "")
	app := mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app", testAdminToken, `{"name":"Acme","uid":"acme"}`)
	if code, body := call(t, http.MethodGet, s.url+"/api/v1/app", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("list apps without a token: status %d, body %s", code, body)
	}
	if code, _ := call(t, http.MethodGet, s.url+"/api/v1/app", "not-the-token", ""); code != http.StatusUnauthorized {
		t.Fatalf("list apps with a wrong token: status %d", code)
	}
	waitMetrics(t, s.url, "# TYPE hookd_attempts_total counter", "# TYPE hookd_attempt_duration_seconds histogram",
		"# TYPE hookd_deliveries_total counter", "# TYPE hookd_pending_deliveries gauge",
		"# TYPE hookd_oldest_pending_seconds gauge", "hookd_pending_deliveries 0", "hookd_store_up 1")

	// One message to an endpoint that accepts it and one that fails it (its retry is an hour away).
	appID := app["id"].(string)
	mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/acme/endpoint", testAdminToken, `{"url":"`+recv.URL+`/ok","uid":"ok"}`)
	failing := mustCall(t, http.StatusCreated, http.MethodPost, s.url+"/api/v1/app/acme/endpoint", testAdminToken, `{"url":"`+recv.URL+`/fail","uid":"fail"}`)
	mustCall(t, http.StatusAccepted, http.MethodPost, s.url+"/api/v1/app/acme/msg", testAdminToken, `{"eventType":"invoice.paid","payload":{"invoice":"in_1"}}`)
	out := waitMetrics(t, s.url,
		`hookd_attempts_total{outcome="success",trigger="scheduled"} 1`,
		`hookd_attempts_total{outcome="failure",trigger="scheduled"} 1`,
		`hookd_deliveries_total{status="delivered"} 1`,
		`hookd_attempt_duration_seconds_count 2`,
		"hookd_pending_deliveries 1",
		// A family without samples has no TYPE line: the endpoint families appear with a backlog.
		"# TYPE hookd_endpoint_pending_deliveries gauge", "# TYPE hookd_endpoint_oldest_pending_seconds gauge",
		fmt.Sprintf(`hookd_endpoint_circuit_open{app_id=%q,endpoint_id=%q} 0`, appID, failing["id"]),
		fmt.Sprintf(`hookd_endpoint_pending_deliveries{app_id=%q,endpoint_id=%q} 1`, appID, failing["id"]))
	if !strings.Contains(out, fmt.Sprintf(`hookd_endpoint_oldest_pending_seconds{app_id=%q,endpoint_id=%q} `, appID, failing["id"])) {
		t.Errorf("no backlog age for the failing endpoint:\n%s", out)
	}
	secret := mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app/acme/endpoint/ok/secret", testAdminToken, "")

	s.stop(t)
	logs := s.stderr.String()
	if strings.Contains(logs, testAdminToken) {
		t.Errorf("the admin token is in the logs:\n%s", logs)
	}
	if key, _ := secret["key"].(string); key == "" || strings.Contains(logs, key) {
		t.Errorf("endpoint secret %q empty or in the logs:\n%s", key, logs)
	}
}

func TestServeGeneratesTokenOnce(t *testing.T) {
	t.Parallel()
	args := []string{"--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "hookd.db"), "--workers", "2"}

	first := startServe(t, args...)
	m := adminTokenRE.FindStringSubmatch(first.stderr.String())
	if m == nil {
		t.Fatalf("no generated admin token printed; stderr:\n%s", first.stderr)
	}
	token := m[1]
	if !strings.HasPrefix(token, "hookd_sk_") {
		t.Errorf("token %q lacks hookd_sk_", token)
	}
	mustCall(t, http.StatusOK, http.MethodGet, first.url+"/api/v1/app", token, "")
	first.stop(t)
	if n := strings.Count(first.stderr.String(), token); n != 1 {
		t.Errorf("the token appears %d times on stderr, want once:\n%s", n, first.stderr)
	}

	second := startServe(t, args...)
	if strings.Contains(second.stderr.String(), "admin token") {
		t.Errorf("second start printed a token:\n%s", second.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, second.url+"/api/v1/app", token, "")
	// A third process on the same file is refused while the second runs.
	if r := run(t, "", append([]string{"serve"}, args...)...); r.code != exitFailure || !strings.Contains(r.stderr, "another hookd process has this database open") {
		t.Errorf("a second serve on one database: exit %d, stderr %q", r.code, r.stderr)
	}
	second.stop(t)
}

func TestServeBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--timeout", "x"}, `--timeout "x": use a duration above zero`},
		{[]string{"--timeout", "-1s"}, `--timeout "-1s"`},
		{[]string{"--slot-lease", "500ms"}, `--slot-lease "500ms": use a duration of at least 1s`},
		{[]string{"--allow-subnets", "10.0.0.0/33"}, `--allow-subnets "10.0.0.0/33": not a CIDR, e.g. 127.0.0.0/8,10.0.0.0/8`},
		{[]string{"--allow-subnets", "127.0.0.0/8,10.0.0.1"}, `--allow-subnets "127.0.0.0/8,10.0.0.1": not a CIDR`},
		{[]string{"--retry-schedule", "5s,x"}, `--retry-schedule "5s,x": "x" is not a wait`},
		{[]string{"--retry-schedule", "5s,-1m"}, `--retry-schedule "5s,-1m"`},
		{[]string{"--db", "mysql://hookd:hunter2@x"}, `--db "mysql://hookd:xxxxx@x": use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`},
		{[]string{"--queue", "http://cache:6379"}, `--queue "http://cache:6379": use redis://`},
		{[]string{"--queue-namespace", "a b"}, `--queue-namespace "a b": use at most 64 letters`},
		{[]string{"--sweep-after", "soon"}, `--sweep-after "soon": use a duration of at least 1s, e.g. 1m or 30s`},
		{[]string{"--sweep-after", "500ms"}, `--sweep-after "500ms": use a duration of at least 1s`},
		{[]string{"--sweep-after", "-1m"}, `--sweep-after "-1m"`},
		{[]string{"--role", "boss"}, `--role "boss": use all (the API and the workers), api (the API only) or worker (the workers only)`},
		{[]string{"--db", "sqlite:"}, `--db "sqlite:": the path is empty`},
		{[]string{"--workers", "0"}, `--workers "0": use a whole number from 1 to 10000`},
		{[]string{"--workers", "many"}, `--workers "many"`},
		{[]string{"--listen", "8071"}, `--listen "8071": use HOST:PORT`},
		{[]string{"--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`},
		{[]string{"--max-payload", "0"}, `--max-payload "0": use a size from 1 byte to 64MiB`},
		{[]string{"--max-payload", "1GiB"}, `--max-payload "1GiB"`},
		{[]string{"--operational-webhook-url", "ftp://ops"}, `--operational-webhook-url "ftp://ops"`},
		{[]string{"--operational-webhook-secret", "whsec_short"}, `hookd secret new`},
		{[]string{"--log-format", "xml"}, `--log-format "xml": use text or json`},
		{[]string{"--log-level", "loud"}, `--log-level "loud": use debug, info, warn or error`},
		{[]string{"--token", "two words"}, `--token: use printable ASCII without spaces`},
		{[]string{"--main-key", "c2hvcnQ="}, `--main-key: not 32 bytes in base64; make one with: openssl rand -base64 32`},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		r := run(t, "", append([]string{"serve"}, tc.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "hint: ") {
			t.Errorf("serve %q: exit %d, stderr %q; want exit 2 and %q with a hint", tc.args, r.code, r.stderr, tc.want)
		}
		if strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "two words") {
			t.Errorf("serve %q: a secret is echoed: %q", tc.args, r.stderr)
		}
	}
	// A PostgreSQL that does not answer stops start-up with exit 1, a hint, and no password.
	r := run(t, "", "serve", "--listen", "127.0.0.1:0", "--db", "postgres://hookd:hunter2@127.0.0.1:1/hookd?connect_timeout=2")
	if r.code != exitFailure || !strings.Contains(r.stderr, "open the database") || !strings.Contains(r.stderr, "hint: check that PostgreSQL answers") {
		t.Errorf("serve on a PostgreSQL that does not answer: exit %d, stderr %q", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "hunter2") {
		t.Errorf("serve on a PostgreSQL that does not answer: the password is echoed: %q", r.stderr)
	}
}

// TestServeConfig pins where each value comes from: a flag beats its variable, a variable its
// default.
func TestServeConfig(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, env map[string]string, args ...string) *serveConfig {
		t.Helper()
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		c, err := parseServeConfig(quietEnv(), args, lookup)
		if err != nil {
			t.Fatalf("parse %q with %v: %v", args, env, err)
		}
		return c
	}

	c := parse(t, nil)
	n := min(50*runtime.NumCPU(), 400)
	want := &serveConfig{
		listen: "127.0.0.1:8071", db: dbTarget{sqlitePath: "hookd.db"}, role: "all", timeout: 15 * time.Second, maxTimeout: 30 * time.Second, maxPayload: 1 << 20,
		retrySchedule: hookd.DefaultRetrySchedule,
		workers:       map[hookd.Lane]int{hookd.LaneFirst: n, hookd.LaneRetry: n / 2, hookd.LaneManual: n / 10},
		sweepAfter:    time.Minute,
		maxEndpoints:  hookd.DefaultMaxEndpointsPerApp, messageRate: hookd.DefaultMessageRatePerApp,
		retention: 90 * 24 * time.Hour, slotLease: 10 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}

	env := map[string]string{
		"HOOKD_LISTEN": "0.0.0.0:9000", "HOOKD_DB": "sqlite:///var/lib/hookd/h.db", "DATABASE_URL": "postgres://x",
		"HOOKD_TOKEN": "from-env-0123456789abcdef0123456789", "HOOKD_ALLOW_SUBNETS": "10.0.0.0/8, 192.168.1.7/16", "HOOKD_RETRY_SCHEDULE": "none",
		"HOOKD_TIMEOUT": "3s", "HOOKD_WORKERS": "1", "HOOKD_MAX_PAYLOAD": "512KiB", "HOOKD_LOG_FORMAT": "json",
		"HOOKD_LOG_LEVEL": "warn", "HOOKD_SWEEP_AFTER": "2s",
	}
	c = parse(t, env)
	want = &serveConfig{
		listen: "0.0.0.0:9000", db: dbTarget{sqlitePath: "/var/lib/hookd/h.db"}, role: "all", token: "from-env-0123456789abcdef0123456789",
		allowSubnets:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.0.0/16")},
		retrySchedule: []time.Duration{}, timeout: 3 * time.Second, maxTimeout: 30 * time.Second, maxPayload: 512 << 10, logJSON: true, logLevel: slog.LevelWarn,
		workers:    map[hookd.Lane]int{hookd.LaneFirst: 1, hookd.LaneRetry: 1, hookd.LaneManual: 1},
		sweepAfter: 2 * time.Second, maxEndpoints: hookd.DefaultMaxEndpointsPerApp, messageRate: hookd.DefaultMessageRatePerApp,
		retention: 90 * 24 * time.Hour, slotLease: 10 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("from the environment:\n got %+v\nwant %+v", c, want)
	}

	c = parse(t, env, "--listen", "127.0.0.1:0", "--db", "other.db", "--token", "from-flag-0123456789abcdef0123456789", "--workers", "40",
		"--retry-schedule", "1s, 2m", "--max-payload", "2MB", "--log-level", "debug", "--allow-subnets", "", "--sweep-after", "90s")
	if c.listen != "127.0.0.1:0" || c.db.sqlitePath != "other.db" || c.token != "from-flag-0123456789abcdef0123456789" || c.allowSubnets != nil ||
		fmt.Sprint(c.workers) != fmt.Sprint(map[hookd.Lane]int{hookd.LaneFirst: 40, hookd.LaneRetry: 20, hookd.LaneManual: 4}) ||
		fmt.Sprint(c.retrySchedule) != "[1s 2m0s]" || c.maxPayload != 2000000 || c.logLevel != slog.LevelDebug || c.timeout != 3*time.Second ||
		c.sweepAfter != 90*time.Second {
		t.Errorf("flags over the environment: %+v", c)
	}

	// DATABASE_URL stands in for HOOKD_DB; an empty variable counts as unset.
	c = parse(t, map[string]string{"HOOKD_DB": "", "DATABASE_URL": "sqlite:from-url.db"})
	if c.db.sqlitePath != "from-url.db" {
		t.Errorf("DATABASE_URL: db %q", c.db.sqlitePath)
	}
	_, err := parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		return map[string]string{"HOOKD_TIMEOUT": "soon"}[k], k == "HOOKD_TIMEOUT"
	})
	if err == nil || !strings.Contains(err.Error(), `HOOKD_TIMEOUT (for --timeout) "soon": use a duration above zero`) {
		t.Errorf("bad HOOKD_TIMEOUT: %v", err)
	}
	_, err = parseServeConfig(quietEnv(), nil, func(k string) (string, bool) {
		return map[string]string{"HOOKD_SWEEP_AFTER": "0s"}[k], k == "HOOKD_SWEEP_AFTER"
	})
	if err == nil || !strings.Contains(err.Error(), `HOOKD_SWEEP_AFTER (for --sweep-after) "0s": use a duration of at least 1s`) {
		t.Errorf("bad HOOKD_SWEEP_AFTER: %v", err)
	}
}

// quietEnv is an env whose streams go nowhere.
func quietEnv() *env {
	return &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
}

// TestServeEnvironment runs serve configured by environment variables alone (not parallel:
// t.Setenv).
func TestServeEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKD_LISTEN", "127.0.0.1:0")
	t.Setenv("HOOKD_DB", "sqlite:"+filepath.Join(dir, "env.db"))
	t.Setenv("DATABASE_URL", "postgres://ignored")
	t.Setenv("HOOKD_TOKEN", testAdminToken)
	t.Setenv("HOOKD_LOG_FORMAT", "json")
	t.Setenv("HOOKD_WORKERS", "3")
	t.Setenv("HOOKD_TIMEOUT", "2s")

	s := startServe(t)
	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app", testAdminToken, "")
	s.stop(t)
	if _, err := os.Stat(filepath.Join(dir, "env.db")); err != nil {
		t.Errorf("HOOKD_DB not used: %v", err)
	}
	jsonLines := 0
	for line := range strings.Lines(s.stderr.String()) {
		if strings.HasPrefix(line, "{") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Errorf("log line %q is not JSON: %v", line, err)
			}
			jsonLines++
		}
	}
	if jsonLines == 0 {
		t.Errorf("HOOKD_LOG_FORMAT=json: no JSON log line in\n%s", s.stderr)
	}

	t.Setenv("HOOKD_TIMEOUT", "x")
	r := run(t, "", "serve")
	if r.code != exitUsage || !strings.Contains(r.stderr, `HOOKD_TIMEOUT (for --timeout) "x"`) {
		t.Errorf("bad HOOKD_TIMEOUT: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "", "serve", "--timeout", "y")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--timeout "y"`) {
		t.Errorf("--timeout over HOOKD_TIMEOUT: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeSIGTERM builds the binary and stops it with SIGTERM: it drains and exits 0.
func TestServeSIGTERM(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildHookd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "hookd.db"),
		"--token", testAdminToken, "--workers", "2")
	cmd.Env = append(os.Environ(), "HOOKD_LOG_FORMAT=text")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		lines []string
		url   = make(chan string, 1)
		ended = make(chan struct{})
	)
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
		}
	}()
	select {
	case u := <-url:
		mustCall(t, http.StatusOK, http.MethodGet, u+"/api/v1/health", "", "")
	case <-ended:
		_ = cmd.Wait()
		t.Fatalf("hookd serve exited before listening:\n%s", strings.Join(lines, "\n"))
	case <-ctx.Done():
		t.Fatal("hookd serve not listening after 60 s")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ended
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("exit code %d (%v) after SIGTERM:\n%s", code, err, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), `msg=stopped`) {
		t.Errorf("no orderly stop logged:\n%s", strings.Join(lines, "\n"))
	}
}
