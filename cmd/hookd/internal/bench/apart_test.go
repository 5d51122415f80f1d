package bench

import (
	"errors"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchApartSQLite runs every benchmark at a tiny size on the serve target with Apart: a
// freshly built hookd as one hookd serve process on SQLite, and the same binary's receiver and
// sender children. It checks that every delivery arrived once, verified, by the receiver child's
// counts, that B1 reports each child's CPU time, that the machine's shares add up, and that the
// children are gone after the run. It asserts no speed.
func TestBenchApartSQLite(t *testing.T) {
	bin := buildHookdBinary(t)
	o := tinyOptions(t, "", "")
	if err := o.Check(strings.Join(o.Only, ","), "serve"); err != nil {
		t.Fatal(err)
	}
	o.Apart, o.HookdBinary, o.ApartBinary = true, bin, bin
	rep, _ := runTiny(t, o, []string{"--target", "serve", "--apart", "--json"})
	if !rep.Apart || len(rep.Targets) != 1 || rep.Targets[0].Name != "serve" {
		t.Fatalf("apart %v, targets %+v; want apart, serve alone", rep.Apart, rep.Targets)
	}
	tr := rep.Targets[0]
	checkTinyDeliveries(t, tr)
	if tr.B1.TargetDeliveriesPerSec != b1TargetPerSec || tr.B3.TargetP50Ms != millis(b3TargetP50) {
		t.Errorf("B1 target %g deliveries/s, B3 %g ms; want SQLite's %g and %g", tr.B1.TargetDeliveriesPerSec, tr.B3.TargetP50Ms, b1TargetPerSec, millis(b3TargetP50))
	}
	if len(tr.Schemas) != 0 {
		t.Errorf("schemas %v on SQLite, want none", tr.Schemas)
	}
	checkApartResources(t, tr, []string{"hookd serve"}, nil)
}

// TestBenchApartPostgres is TestBenchApartSQLite on the PostgreSQL of HOOKD_TEST_POSTGRES_URL,
// for serve-postgres (one hookd serve process) and fleet (an API and a worker process), in one
// run beside the in-process postgres target, which keeps its receiver and producers and still
// gets the machine's split. PostgreSQL's processes have a share of their own.
func TestBenchApartPostgres(t *testing.T) {
	dbURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if dbURL == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run --apart on serve-postgres and fleet")
	}
	bin := buildHookdBinary(t)
	o := tinyOptions(t, dbURL, "")
	o.FleetWorkers = 1
	if err := o.Check("B1,B3", "postgres,serve-postgres,fleet"); err != nil {
		t.Fatal(err)
	}
	o.Apart, o.HookdBinary, o.ApartBinary = true, bin, bin
	rep, _ := runTiny(t, o, []string{"--db", dbURL, "--target", "postgres,serve-postgres,fleet", "--apart", "--json"})
	if names := targetNames(rep); !slices.Equal(names, []string{"postgres", "serve-postgres", "fleet"}) {
		t.Fatalf("targets %v", names)
	}
	for _, tr := range rep.Targets {
		for name, c := range map[string]benchCounts{"B1": tr.B1.Receiver, "B3": tr.B3.Receiver} {
			if c.Delivered != c.Expected || c.Unverified != 0 || c.Duplicates != 0 || c.Expected == 0 {
				t.Errorf("%s %s: %+v, want every expected delivery verified, once", tr.Name, name, c)
			}
		}
		if tr.B1.RecordedDelivered != tr.B1.Deliveries {
			t.Errorf("%s B1: the store records %d of %d delivered", tr.Name, tr.B1.RecordedDelivered, tr.B1.Deliveries)
		}
	}
	in := rep.Targets[0]
	if runtime.GOOS == "linux" {
		res := in.B1.Resources
		if res == nil || res.Machine == nil || len(res.Apart) != 0 {
			t.Fatalf("postgres B1 resources %+v: want the machine's split and no apart process", res)
		}
		if got := shareNames(res.Machine); !slices.Equal(got, []string{"postgres", "bench", "other"}) {
			t.Errorf("postgres B1 shares %v, want postgres, bench, other", got)
		}
		checkSharesAddUp(t, in.Name, res)
	}
	checkApartResources(t, rep.Targets[1], []string{"hookd serve"}, []string{"postgres"})
	checkApartResources(t, rep.Targets[2], []string{"hookd api", "hookd worker 1"}, []string{"postgres"})
}

// TestBenchApartOptions checks what --apart and the serve targets need.
func TestBenchApartOptions(t *testing.T) {
	t.Parallel()
	const db = "postgres://postgres@127.0.0.1:5432/postgres"
	for _, tc := range []struct {
		db, targets string
		apart       bool
		want        string // the usage error's message; "": none
	}{
		{"", "library,api", true, "bench: --apart with no target that runs hookd serve"},
		{db, "postgres", true, "bench: --apart with no target that runs hookd serve"},
		{"", "serve-postgres", false, "bench: --target serve-postgres needs --db"},
		{"", "serve", true, ""},
		{"", "library,serve", true, ""},
		{db, "serve-postgres,postgres", true, ""},
		{db, "serve-postgres", false, ""},
	} {
		o := DefaultOptions()
		o.DBURL, o.Apart = tc.db, tc.apart
		err := o.Check("B1", tc.targets)
		var be *Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q apart %v: %v", tc.targets, tc.apart, err)
		case tc.want != "" && (!errors.As(err, &be) || !be.Usage || be.Msg != tc.want || be.Hint == ""):
			t.Errorf("%q apart %v: %v; want the usage error %q with a hint", tc.targets, tc.apart, err, tc.want)
		}
	}
	// Named only: neither --db nor its absence picks serve or serve-postgres.
	for _, db := range []string{"", db} {
		o := DefaultOptions()
		o.DBURL = db
		if err := o.Check("B1", ""); err != nil || slices.Contains(o.Targets, "serve") || slices.Contains(o.Targets, "serve-postgres") {
			t.Errorf("default targets with --db %q: %v, %v; want no serve target", db, o.Targets, err)
		}
	}
}

// TestParseProcStat checks which of /proc/stat's columns count as busy: all but idle and
// iowait, guest and guest_nice being inside user and nice already.
func TestParseProcStat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stat string
		want time.Duration
		ok   bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 2 30 5000 40 1 6 7 50 1\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 1460 * time.Millisecond, true},
		{"cpu  100 0 0 9 9 0 0 0\n", time.Second, true}, // no guest columns (old kernels)
		{"cpu0 100 0 0 9 9 0 0 0\n", 0, false},          // not the machine's line
		{"cpu  100 0 0 9\n", 0, false},                  // too short
		{"cpu  100 x 0 9 9 0 0 0 0 0\n", 0, false},      // not a number
		{"", 0, false},
	} {
		got, ok := parseProcStat([]byte(tc.stat))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseProcStat(%q) = %v, %v; want %v, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
}

// TestNewMachineUsage checks that the shares, other included, add up to the machine's time,
// each with its percentage, and that other may be below 0 when the processes' counters run
// ahead of the machine's.
func TestNewMachineUsage(t *testing.T) {
	t.Parallel()
	m := newMachineUsage(2*time.Second, 1000, []namedCPU{{"hookd", 800 * time.Millisecond}, {"postgres", 600 * time.Millisecond}, {"bench", 100 * time.Millisecond}})
	want := []cpuShare{
		{"hookd", 0.8, 800, 40}, {"postgres", 0.6, 600, 30}, {"bench", 0.1, 100, 5}, {"other", 0.5, 500, 25},
	}
	if !slices.Equal(m.Shares, want) || m.CPUSeconds != 2 || m.CPUPerDeliveryUs != 2000 || m.RunCPUPerDeliveryUs != 1500 {
		t.Errorf("newMachineUsage = %+v, want shares %+v of 2 s, 2,000 µs a delivery, 1,500 µs of them the run's", m, want)
	}
	over := newMachineUsage(time.Second, 10, []namedCPU{{"hookd", 1010 * time.Millisecond}})
	if o := over.Shares[len(over.Shares)-1]; o.Name != "other" || o.CPUSeconds != -0.01 {
		t.Errorf("other = %+v, want -10 ms", o)
	}
}

// checkApartResources checks B1's resources of target tr of an Apart run: the hookd children
// named hookd, the receiver and sender children, each with a pid of its own that is gone after
// the run, and the machine's shares, servers' included, adding up.
func checkApartResources(t *testing.T, tr *benchTargetReport, hookd, servers []string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	res := tr.B1.Resources
	if res == nil || res.Machine == nil {
		t.Fatalf("%s B1 resources %+v: want the machine's split", tr.Name, res)
	}
	pids := map[int]bool{os.Getpid(): true}
	var names []string
	for _, p := range slices.Concat(res.Hookd, res.Apart) {
		names = append(names, p.Name)
		if pids[p.PID] || p.PID <= 0 || p.CPUSeconds < 0 {
			t.Errorf("%s B1 process %+v: want a pid of its own, apart from this process's", tr.Name, p)
		}
		pids[p.PID] = true
		if processExists(p.PID) {
			t.Errorf("%s: %s (pid %d) still exists after the run, want it killed and waited for", tr.Name, p.Name, p.PID)
		}
	}
	if want := append(slices.Clone(hookd), "bench receiver", "bench sender"); !slices.Equal(names, want) {
		t.Errorf("%s B1 processes %q, want %q", tr.Name, names, want)
	}
	want := append(append([]string{"hookd"}, servers...), "receiver", "sender", "bench", "other")
	if got := shareNames(res.Machine); !slices.Equal(got, want) {
		t.Errorf("%s B1 shares %v, want %v", tr.Name, got, want)
	}
	checkSharesAddUp(t, tr.Name, res)
	if res.TotalCPUPerDeliveryUs == nil {
		t.Errorf("%s B1: no total", tr.Name)
	}
}

// checkSharesAddUp checks that the machine's shares add up to its time, within rounding, that
// each process's share is what its own rows say, and that the processes named took no more
// than the machine did, but for a few clock ticks of each counter's rounding.
func checkSharesAddUp(t *testing.T, name string, res *b1Resources) {
	t.Helper()
	m := res.Machine
	var sum, named float64
	for _, s := range m.Shares {
		sum += s.CPUSeconds
		if s.Name != shareOther {
			named += s.CPUSeconds
			if s.CPUSeconds < 0 {
				t.Errorf("%s: share %+v below 0", name, s)
			}
		}
	}
	if math.Abs(sum-m.CPUSeconds) > 1e-6 {
		t.Errorf("%s: shares add up to %g s, the machine's time is %g s", name, sum, m.CPUSeconds)
	}
	// Each process's and the machine's counters are read to the clock tick (10 ms), at slightly
	// different instants: allow two ticks a process.
	procs := 1 + len(res.Hookd) + len(res.Apart) + len(res.Servers)
	if slack := float64(2*procs) * 0.01; named > m.CPUSeconds+slack {
		t.Errorf("%s: the processes took %g s, more than the machine's %g s", name, named, m.CPUSeconds)
	}
	byName := map[string]float64{}
	for _, s := range m.Shares {
		byName[s.Name] = s.CPUSeconds
	}
	sumOf := func(ps []processUsage, match string) (v float64) {
		for _, p := range ps {
			if strings.Contains(p.Name, match) {
				v += p.CPUSeconds
			}
		}
		return v
	}
	for share, v := range map[string]float64{
		shareHookd: sumOf(res.Hookd, "hookd"), shareReceiver: sumOf(res.Apart, "receiver"), shareSender: sumOf(res.Apart, "sender"),
		shareBench: res.ProcessCPUSeconds,
	} {
		if got, ok := byName[share]; ok && math.Abs(got-v) > 1e-6 {
			t.Errorf("%s: share %s is %g s, its processes' rows %g s", name, share, got, v)
		}
	}
	// A server's share is its run's backends and its own processes where they are known (other
	// clients' backends count in other), else all of its processes.
	for _, s := range res.Servers {
		want := s.CPUSeconds
		if s.Run != nil {
			if s.Shared == nil {
				t.Errorf("%s: server %s has its run's processes but not its own", name, s.Name)
				continue
			}
			want = s.Run.CPUSeconds + s.Shared.CPUSeconds
		}
		if got := byName[s.Name]; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: share %s is %g s, its processes' rows %g s", name, s.Name, got, want)
		}
	}
}

// shareNames returns the names of m's shares, in order.
func shareNames(m *machineUsage) []string {
	var names []string
	for _, s := range m.Shares {
		names = append(names, s.Name)
	}
	return names
}

// targetNames returns the names of rep's targets, in order.
func targetNames(rep *Report) []string {
	var names []string
	for _, t := range rep.Targets {
		names = append(names, t.Name)
	}
	return names
}
