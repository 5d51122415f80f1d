package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
)

// This file holds the bench's targets of hookd as "hookd serve" child processes, called over
// HTTP: serve (one process on a new SQLite file per run), serve-postgres (one process on
// PostgreSQL) and fleet (one API process and worker processes on PostgreSQL), each PostgreSQL
// run in a schema of its own.

const (
	// fleetStartTimeout bounds how long a child takes to listen; the first one of a run also
	// applies the migrations.
	fleetStartTimeout = 60 * time.Second
	// fleetStderrLines is how many of a child's last stderr lines an error shows.
	fleetStderrLines = 40
)

// fleetListening is the line serve writes on stderr once it serves.
var fleetListening = regexp.MustCompile(`^listening on (http://\S+)$`)

// fleetTarget is hookd serve in child processes of the bench: per run, a new SQLite file in
// sqliteDir, or a new schema ("bench_<run>_<target>_<benchmark>") on dbURL, and on it one
// process of serve's default --role all (workers 0) or one "--role api" process and workers
// "--role worker" processes (PostgreSQL only), all with serve's defaults (its workers, its
// retry schedule) but for what the bench needs: loopback allowed (--allow-subnets 127.0.0.0/8), B2's --timeout, and no
// per-application quota (--max-endpoints-per-app and --max-messages-per-second-per-app none: B1
// sends to one application faster than serve's default rate, which bounds a tenant, not the
// engine measured). The database URL and the admin token reach the children through HOOKD_DB
// and HOOKD_TOKEN, not flags, which ps shows. Setup, sends and counts go to the API process as
// the api target's go to its server. When a run ends its children are killed and waited for,
// and its schema is dropped unless keep.
type fleetTarget struct {
	label     string // the target's name: serve, serve-postgres or fleet
	sqliteDir string // where the SQLite files go; "": PostgreSQL at dbURL
	dbURL     string
	bin       string // the hookd binary; "": this process's executable
	workers   int    // worker processes beside an API process; 0: one process with --role all
	producers int    // concurrent callers of the API process
	run       string // the run's id, in every schema name
	keep      bool

	mu      sync.Mutex
	schemas []string       // created so far, in order
	live    *fleetInstance // the open run, whose processes B1 samples; nil between runs
}

func (t *fleetTarget) name() string { return t.label }

func (t *fleetTarget) describe() string {
	procs := "one hookd serve process (--role all)"
	if t.workers > 0 {
		procs = fmt.Sprintf("one --role api and %d --role worker processes", t.workers)
	}
	db := "on a new SQLite file per run"
	if t.sqliteDir == "" {
		db = "on PostgreSQL " + redact.URL(t.dbURL) + ", a fresh schema per run (search_path in the URL), dropped afterwards"
	}
	return fmt.Sprintf("hookd serve as child processes of the bench: %s %s, "+
		"serve's defaults but loopback allowed, no per-application quotas and B2's --timeout. Setup, sends and counts go over HTTP to the API process "+
		"(plain net/http and JSON); the receiver and the producers run in the bench's process, or in children of their own with --apart",
		procs, db)
}

func (t *fleetTarget) targetSendsPerSec() float64 { return b1TargetSendsPerSecAPI }

func (t *fleetTarget) targetDeliveriesPerSec() float64 {
	if t.sqliteDir != "" {
		return b1TargetPerSec
	}
	return b1TargetPerSecPostgres
}

func (t *fleetTarget) targetP50() time.Duration {
	if t.sqliteDir != "" {
		return b3TargetP50
	}
	return b3TargetP50Postgres
}

func (t *fleetTarget) servers() []string {
	if t.sqliteDir != "" {
		return nil
	}
	return []string{"postgres"}
}

// used returns the schemas the target's runs created so far, and no Redis namespace.
func (t *fleetTarget) used() (schemas, namespaces []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.schemas), nil
}

// appName is the application_name of the children's connections.
func (t *fleetTarget) appName() string { return "hookd-bench-" + t.run + "-" + t.label }

// runBackends returns the pids of the PostgreSQL backends of the children's connections, and
// of the server's own processes.
func (t *fleetTarget) runBackends(ctx context.Context) (string, []int, []int, bool) {
	if t.sqliteDir != "" {
		return "", nil, nil, false
	}
	return backendsNamed(ctx, t.dbURL, t.appName())
}

// processes returns the children of the open run, the API process first.
func (t *fleetTarget) processes() []benchProcess {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live == nil {
		return nil
	}
	out := make([]benchProcess, len(t.live.children))
	for i, c := range t.live.children {
		out[i] = benchProcess{name: "hookd " + c.role, pid: c.cmd.Process.Pid, share: shareHookd}
	}
	return out
}

func (t *fleetTarget) open(ctx context.Context, name string, timeout time.Duration) (_ benchInstance, err error) {
	inst := &fleetInstance{target: t}
	if t.sqliteDir == "" {
		inst.schema = "bench_" + t.run + "_" + strings.ReplaceAll(t.label, "-", "_") + "_" + strings.ReplaceAll(name, "-", "_")
		t.mu.Lock()
		t.schemas = append(t.schemas, inst.schema)
		t.mu.Unlock()
	}
	// Whatever happens from here on, what was started goes.
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("open %s: %w", name, err), inst.close())
		}
	}()

	bin := t.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find the hookd binary: %w", err)
		}
	}
	childDB := "sqlite:" + filepath.Join(t.sqliteDir, t.label+"-"+name+".db")
	if t.sqliteDir == "" {
		if childDB, err = t.childURL(inst.schema); err != nil {
			return nil, err
		}
		if err := createBenchSchema(ctx, t.dbURL, inst.schema); err != nil {
			return nil, err
		}
	}
	token, err := newFleetToken()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--allow-subnets", "127.0.0.0/8",
		"--max-endpoints-per-app", "none", "--max-messages-per-second-per-app", "none"}
	if timeout > 0 {
		args = append(args, "--timeout", timeout.String())
	}
	env := fleetEnv(os.Environ(), "HOOKD_DB="+childDB, "HOOKD_LOG_LEVEL=warn")
	// The API process first: it applies the migrations and sets the admin token.
	role, apiArgs := "serve", args
	if t.workers > 0 {
		role, apiArgs = "api", append(slices.Clone(args), "--role", "api")
	}
	api, err := startFleetChild(ctx, role, bin, apiArgs, append(env, "HOOKD_TOKEN="+token))
	if err != nil {
		return nil, err
	}
	inst.children = append(inst.children, api)
	for n := range t.workers {
		w, err := startFleetChild(ctx, fmt.Sprintf("worker %d", n+1), bin, append(slices.Clone(args), "--role", "worker"), env)
		if err != nil {
			return nil, err
		}
		inst.children = append(inst.children, w)
	}
	inst.api = &apiInstance{http: apiHTTPClient(t.producers), base: api.url, token: token}
	if err := inst.api.createApplication(ctx, name); err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.live = inst
	t.mu.Unlock()
	return inst, nil
}

// childURL is dbURL with the run's schema as its search_path, where serve creates hookd's
// tables, and an application_name of the run's own, so that runBackends can tell the backends
// that serve the children from the server's others.
func (t *fleetTarget) childURL(schema string) (string, error) {
	u, err := url.Parse(t.dbURL)
	if err != nil {
		return "", fmt.Errorf("--db %s: %w", redact.URL(t.dbURL), err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", t.appName())
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// createBenchSchema creates schema in the database at dbURL: serve creates its tables in the
// search_path's schema, which must exist.
func createBenchSchema(ctx context.Context, dbURL, schema string) error {
	conn, err := connectDB(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	return nil
}

// newFleetToken returns a random admin token for a run's API process.
func newFleetToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make an admin token: %w", err)
	}
	return "hookd_bench_" + hex.EncodeToString(b[:]), nil
}

// fleetEnv is base without the variables serve reads (HOOKD_*, DATABASE_URL, REDIS_URL), so
// that a child runs with what the bench gives it alone, and with extra added.
func fleetEnv(base []string, extra ...string) []string {
	var out []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "HOOKD_") || name == "DATABASE_URL" || name == "REDIS_URL" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// fleetInstance is one application behind the API process of one run's children.
type fleetInstance struct {
	target   *fleetTarget
	schema   string        // the run's PostgreSQL schema; "": SQLite
	api      *apiInstance  // the calls to the API process; it runs nothing of its own
	children []*fleetChild // the API process, then the workers
}

func (i *fleetInstance) addEndpoint(ctx context.Context, endpointURL string) (string, error) {
	return i.api.addEndpoint(ctx, endpointURL)
}

func (i *fleetInstance) addOrderedEndpoint(ctx context.Context, endpointURL string) (string, error) {
	return i.api.addOrderedEndpoint(ctx, endpointURL)
}

func (i *fleetInstance) send(ctx context.Context, payload []byte) (string, error) {
	return i.api.send(ctx, payload)
}

// count lists the deliveries of each endpoint in status through the API (GET
// .../endpoint/{id}/msg?status=), page by page. The API's message statuses tell delivered
// (0) and pending (1, not attempted yet, and 3, attempted) apart; failed and cancelled share 2,
// so those two are not counted.
func (i *fleetInstance) count(ctx context.Context, status hookd.DeliveryStatus) (int, error) {
	var codes []int
	switch status {
	case hookd.DeliveryDelivered:
		codes = []int{0}
	case hookd.DeliveryPending:
		codes = []int{1, 3}
	default:
		return 0, fmt.Errorf("count %s deliveries: the API's statuses do not tell them apart", status)
	}
	n := 0
	for _, ep := range i.api.endpoints {
		base := "/api/v1/app/" + i.api.app + "/endpoint/" + url.PathEscape(ep) + "/msg?"
		for _, code := range codes {
			q := url.Values{"status": {strconv.Itoa(code)}, "limit": {"250"}, "with_content": {"false"}}
			for {
				var page struct {
					Data     []json.RawMessage `json:"data"`
					Iterator *string           `json:"iterator"`
					Done     bool              `json:"done"`
				}
				if err := i.api.call(ctx, http.MethodGet, base+q.Encode(), nil, http.StatusOK, &page); err != nil {
					return 0, fmt.Errorf("count %s deliveries: %w", status, err)
				}
				n += len(page.Data)
				if page.Done || page.Iterator == nil || *page.Iterator == "" {
					break
				}
				q.Set("iterator", *page.Iterator)
			}
		}
	}
	return n, nil
}

// close kills the children and waits for them, then drops the schema unless the target keeps
// it. A child that exited before it was killed is an error showing its stderr.
func (i *fleetInstance) close() error {
	t := i.target
	t.mu.Lock()
	if t.live == i {
		t.live = nil
	}
	t.mu.Unlock()
	var errs []error
	if i.api != nil {
		i.api.close()
	}
	for _, c := range i.children {
		errs = append(errs, c.stop())
	}
	if !t.keep && i.schema != "" {
		ctx, cancel := context.WithTimeout(context.Background(), benchCleanupTimeout)
		defer cancel()
		// A killed child's backend may still be in a statement on the schema's tables, and a
		// DROP beside it can deadlock with it: wait for them to end first.
		waitBackendsGone(ctx, t.dbURL, t.appName())
		errs = append(errs, dropBenchSchema(ctx, t.dbURL, i.schema))
	}
	return errors.Join(errs...)
}

// fleetChild is one child process that writes "listening on URL" on stderr once it serves: a
// "hookd serve", or --apart's "hookd bench receiver" or "hookd bench sender". Its stderr is read
// until it ends, the last lines kept for an error, so that the child never blocks on a full pipe.
type fleetChild struct {
	role string // api, worker 1, serve, bench receiver, ...
	cmd  *exec.Cmd
	url  string // where it listens, from its "listening on" line

	mu   sync.Mutex
	tail []string // the last fleetStderrLines lines of stderr

	exited  chan struct{} // closed once the process has exited and been waited for
	waitErr error         // Wait's error, set before exited closes
	once    sync.Once
	stopErr error
}

// startFleetChild starts bin with args and env as the child role and waits until it listens. A
// child that exits first, or does not listen within fleetStartTimeout, is an error showing its
// stderr.
func startFleetChild(ctx context.Context, role, bin string, args, env []string) (*fleetChild, error) {
	c := &fleetChild{role: role, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	c.cmd.Env = env
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start hookd %s: %w", role, err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hookd %s (%s): %w", role, bin, err)
	}
	listening := make(chan string, 1)
	go c.read(stderr, listening)
	timer := time.NewTimer(fleetStartTimeout)
	defer timer.Stop()
	select {
	case c.url = <-listening:
		return c, nil
	case <-c.exited:
		c.stop()
		return nil, fmt.Errorf("hookd %s exited before it listened (%v); its stderr:\n%s", role, c.waitErr, c.stderr())
	case <-timer.C:
		c.stop()
		return nil, fmt.Errorf("hookd %s not listening after %s; its stderr:\n%s", role, fleetStartTimeout, c.stderr())
	case <-ctx.Done():
		c.stop()
		return nil, fmt.Errorf("start hookd %s: %w", role, ctx.Err())
	}
}

// read reads the child's stderr to its end, keeping its last lines and sending the address of
// its "listening on" line to listening, then waits for the process.
func (c *fleetChild) read(stderr io.Reader, listening chan<- string) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := fleetListening.FindStringSubmatch(line); m != nil {
			select {
			case listening <- m[1]:
			default:
			}
		}
		c.mu.Lock()
		c.tail = append(c.tail, line)
		if len(c.tail) > fleetStderrLines {
			c.tail = slices.Delete(c.tail, 0, len(c.tail)-fleetStderrLines)
		}
		c.mu.Unlock()
	}
	io.Copy(io.Discard, stderr) // a line past the scanner's buffer: drain the rest
	c.waitErr = c.cmd.Wait()
	close(c.exited)
}

// stderr returns the last lines the child wrote on stderr.
func (c *fleetChild) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tail) == 0 {
		return "(nothing)"
	}
	return strings.Join(c.tail, "\n")
}

// stop kills the child, unless it has exited already, and waits for it. A child that exited
// before stop was first called is an error showing its stderr; later calls return the same.
func (c *fleetChild) stop() error {
	c.once.Do(func() {
		select {
		case <-c.exited:
			c.stopErr = fmt.Errorf("hookd %s exited before the run ended (%v); its stderr:\n%s", c.role, c.waitErr, c.stderr())
			return
		default:
		}
		c.cmd.Process.Kill()
		<-c.exited
	})
	return c.stopErr
}

// waitBackendsGone waits, until ctx ends, for the server at dbURL to have no backend whose
// connection has the application_name appName; it gives up quietly, the DROP that follows
// saying what is wrong.
func waitBackendsGone(ctx context.Context, dbURL, appName string) {
	conn, err := connectDB(ctx, dbURL)
	if err != nil {
		return
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", appName).Scan(&n)
		if err != nil || n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
