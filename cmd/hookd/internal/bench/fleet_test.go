package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// buildHookdBinary builds cmd/hookd into a directory of the test and returns its path.
func buildHookdBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the hookd binary and runs it as child processes")
	}
	bin := filepath.Join(t.TempDir(), "hookd")
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/hookd/hookd/cmd/hookd").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// processExists reports whether /proc lists pid: a child killed and waited for is gone from it
// (Linux; elsewhere it says false).
func processExists(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// TestBenchFleet runs every benchmark at a tiny size on the fleet target: an API process and two
// worker processes of a freshly built hookd on the PostgreSQL of HOOKD_TEST_POSTGRES_URL. It
// checks that each delivery arrived once, verified, that B1 reports each child's CPU time, that
// the children are gone and no run's schema is left. A HOOKD_QUEUE in the environment, which
// serve would read, must not reach the children. It asserts no speed.
func TestBenchFleet(t *testing.T) {
	dbURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if dbURL == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run the bench's fleet target")
	}
	bin := buildHookdBinary(t)
	// Nothing listens there: a child that read it would never deliver.
	t.Setenv("HOOKD_QUEUE", "redis://127.0.0.1:1/0")

	o := tinyOptions(t, dbURL, "")
	if err := o.Check(strings.Join(o.Only, ","), "fleet"); err != nil {
		t.Fatal(err)
	}
	o.HookdBinary = bin
	rep, _ := runTiny(t, o, []string{"--db", dbURL, "--target", "fleet", "--messages", "20", "--endpoints", "2", "--producers", "2", "--json"})
	if len(rep.Targets) != 1 || rep.Targets[0].Name != "fleet" {
		t.Fatalf("targets = %+v, want fleet alone", rep.Targets)
	}
	tr := rep.Targets[0]
	checkTinyDeliveries(t, tr)
	if tr.B1.TargetDeliveriesPerSec != b1TargetPerSecPostgres || tr.B1.TargetSendsPerSec != b1TargetSendsPerSecAPI {
		t.Errorf("B1 targets %g deliveries/s, %g sends/s; want PostgreSQL's %g and the API's %g",
			tr.B1.TargetDeliveriesPerSec, tr.B1.TargetSendsPerSec, b1TargetPerSecPostgres, b1TargetSendsPerSecAPI)
	}

	if runtime.GOOS == "linux" {
		res := tr.B1.Resources
		if res == nil {
			t.Fatal("B1 has no resources")
		}
		var names []string
		pids := map[int]bool{os.Getpid(): true}
		for _, p := range res.Hookd {
			names = append(names, p.Name)
			if pids[p.PID] || p.PID <= 0 || p.CPUSeconds < 0 || p.MaxVmHWMKiB <= 0 {
				t.Errorf("B1 hookd process %+v: want a pid of its own, apart from this process's, and its peak memory", p)
			}
			pids[p.PID] = true
			if processExists(p.PID) {
				t.Errorf("%s (pid %d) still exists after the run, want it killed and waited for", p.Name, p.PID)
			}
		}
		if want := []string{"hookd api", "hookd worker 1", "hookd worker 2"}; !slices.Equal(names, want) {
			t.Errorf("B1 hookd processes %q, want %q", names, want)
		}
		if res.TotalCPUPerDeliveryUs == nil {
			t.Errorf("B1 resources %+v: no total", res)
		}
		for _, s := range res.Servers {
			// The children's connections carry the run's application_name.
			if s.Name == "postgres" && (s.Run == nil || s.Run.Processes == 0) {
				t.Errorf("B1 resources: postgres %+v, want the children's backends among them", s)
			}
		}
		text := rep.Text()
		for _, s := range []string{"CPU per delivery: hookd api process", "CPU per delivery: hookd worker 2 process", "peak RSS: hookd worker 1 process"} {
			if !strings.Contains(text, s) {
				t.Errorf("text lacks %q:\n%s", s, text)
			}
		}
	}

	if len(tr.Schemas) != 5 { // B1, B2's two runs, B3, B4
		t.Fatalf("schemas %v, want one per run, 5", tr.Schemas)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) OR nspname LIKE $2",
		tr.Schemas, "bench\\_"+rep.Run+"\\_%")
	var left []string
	if err == nil {
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("schemas left after the run: %v", left)
	}
}

// TestBenchFleetKeep runs B3 on the fleet target with Keep: the run's schema stays, and holds
// the run's messages, which the children wrote there (search_path), not elsewhere.
func TestBenchFleetKeep(t *testing.T) {
	dbURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if dbURL == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run the bench's fleet target")
	}
	bin := buildHookdBinary(t)
	o := DefaultOptions()
	o.DBURL, o.HookdBinary, o.Keep, o.FleetWorkers = dbURL, bin, true, 1
	if err := o.Check("B3", "fleet"); err != nil {
		t.Fatal(err)
	}
	o.B3Sends, o.Stall = 3, 10*time.Second
	rep, _ := runTiny(t, o, []string{"--db", dbURL, "--target", "fleet", "--fleet-workers", "1", "--only", "B3", "--keep", "--json"})
	tr := rep.Targets[0]
	t.Cleanup(func() {
		for _, s := range tr.Schemas {
			if err := dropBenchSchema(context.Background(), dbURL, s); err != nil {
				t.Error(err)
			}
		}
	})
	if len(tr.Schemas) != 1 {
		t.Fatalf("schemas %v, want the one of B3", tr.Schemas)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := pgx.Identifier{tr.Schemas[0]}.Sanitize()
	var messages int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+".hookd_messages").Scan(&messages); err != nil {
		t.Fatalf("the kept schema %s: %v", schema, err)
	}
	if messages != 3 {
		t.Errorf("the kept schema %s holds %d messages, want B3's 3", schema, messages)
	}
	if text := rep.Text(); !strings.Contains(text, "fleet kept: PostgreSQL schemas "+tr.Schemas[0]) {
		t.Errorf("text does not say where the schema is:\n%s", text)
	}
}

// TestFleetChildExitShowsStderr checks that a child that exits before it listens is an error
// quoting its stderr, that one that exits during the run makes stop an error quoting it too, and
// that stop kills and waits for a child that runs.
func TestFleetChildExitShowsStderr(t *testing.T) {
	bin := buildHookdBinary(t)
	ctx := context.Background()
	env := fleetEnv(os.Environ())

	_, err := startFleetChild(ctx, "api", bin, []string{"serve", "--listen", "127.0.0.1:0", "--timeout", "soon"}, env)
	if err == nil || !strings.Contains(err.Error(), "exited before it listened") || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("a child with a wrong flag: %v; want an error quoting serve's message about --timeout", err)
	}

	start := func(name string) *fleetChild {
		c, err := startFleetChild(ctx, name, bin, []string{"serve", "--listen", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(t.TempDir(), name+".db")}, env)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	running := start("worker 1")
	if err := running.stop(); err != nil {
		t.Errorf("stop of a running child: %v, want nil", err)
	}
	if processExists(running.cmd.Process.Pid) {
		t.Errorf("pid %d still exists after stop, want it killed and waited for", running.cmd.Process.Pid)
	}

	crashed := start("worker 2")
	if err := crashed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-crashed.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed child was not waited for within 10 s")
	}
	err = crashed.stop()
	if err == nil || !strings.Contains(err.Error(), "hookd worker 2 exited before the run ended") || !strings.Contains(err.Error(), "listening on http://127.0.0.1:") {
		t.Errorf("stop of a child that died: %v; want an error naming it and quoting its stderr", err)
	}
	if again := crashed.stop(); again == nil || again.Error() != err.Error() {
		t.Errorf("second stop: %v, want the first one's error", again)
	}
}

// TestBenchFleetOptions checks what --target fleet needs: --db, and 1 to 64 --fleet-workers.
func TestBenchFleetOptions(t *testing.T) {
	t.Parallel()
	const db = "postgres://postgres@127.0.0.1:5432/postgres"
	for _, tc := range []struct {
		db      string
		workers int
		want    string // the error's message; "": none
	}{
		{"", 2, "bench: --target fleet needs --db"},
		{db, 0, "bench: --fleet-workers 0 is out of range"},
		{db, 65, "bench: --fleet-workers 65 is out of range"},
		{db, 1, ""},
		{db, 64, ""},
	} {
		o := DefaultOptions()
		o.DBURL, o.FleetWorkers = tc.db, tc.workers
		err := o.Check("B1", "fleet,library")
		var be *Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("db %q, %d workers: %v", tc.db, tc.workers, err)
		case tc.want == "" && !slices.Equal(o.Targets, []string{"library", "fleet"}):
			t.Errorf("db %q, %d workers: targets %v, want library then fleet", tc.db, tc.workers, o.Targets)
		case tc.want != "" && (!errors.As(err, &be) || !be.Usage || be.Msg != tc.want || be.Hint == ""):
			t.Errorf("db %q, %d workers: %v; want the usage error %q with a hint", tc.db, tc.workers, err, tc.want)
		}
	}
	// Named only: --db alone does not pick it.
	o := DefaultOptions()
	o.DBURL, o.FleetWorkers = db, 0
	if err := o.Check("B1", ""); err != nil || slices.Contains(o.Targets, "fleet") {
		t.Errorf("default targets with --db: %v, %v; want no fleet, and its workers unchecked", o.Targets, err)
	}
}

// TestFleetEnv checks that the children see none of serve's variables from this process's
// environment, and the bench's own.
func TestFleetEnv(t *testing.T) {
	t.Parallel()
	got := fleetEnv([]string{"PATH=/bin", "HOOKD_QUEUE=redis://x", "DATABASE_URL=postgres://x", "REDIS_URL=redis://x", "HOME=/h", "HOOKD_TOKEN=old"}, "HOOKD_TOKEN=new")
	if want := []string{"PATH=/bin", "HOME=/h", "HOOKD_TOKEN=new"}; !slices.Equal(got, want) {
		t.Errorf("fleetEnv = %q, want %q", got, want)
	}
}
