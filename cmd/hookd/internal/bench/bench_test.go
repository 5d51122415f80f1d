package bench

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
)

// TestBenchSmall runs every benchmark at a tiny size on both targets, the library and the HTTP
// API, and checks that each delivery arrived once, verified, and that the JSON and the text carry
// the figures of both. It asserts no speed.
func TestBenchSmall(t *testing.T) {
	args := []string{"--messages", "20", "--endpoints", "2", "--producers", "2", "--json"}
	o := tinyOptions(t, "", "")
	rep, out := runTiny(t, o, args)
	if rep.Command != "hookd bench "+strings.Join(args, " ") {
		t.Errorf("command = %q", rep.Command)
	}
	if len(rep.Targets) != 2 || rep.Targets[0].Name != "library" || rep.Targets[1].Name != "api" {
		t.Fatalf("targets = %+v, want library then api", rep.Targets)
	}
	for _, tr := range rep.Targets {
		if tr.B1 == nil || tr.B2 == nil || tr.B3 == nil {
			t.Fatalf("%s: B1 %v, B2 %v, B3 %v; want all three", tr.Name, tr.B1, tr.B2, tr.B3)
		}
		for name, c := range map[string]benchCounts{
			"B1": tr.B1.Receiver, "B2 baseline": tr.B2.Baseline.Receiver,
			"B2 with hanging": tr.B2.WithHanging.Receiver, "B3": tr.B3.Receiver, "B4": tr.B4.Receiver,
		} {
			if c.Delivered != c.Expected || c.Unverified != 0 || c.Duplicates != 0 {
				t.Errorf("%s %s: %+v, want every expected delivery verified, once", tr.Name, name, c)
			}
		}
		if got := tr.B1.Receiver.Expected; got != 40 {
			t.Errorf("%s B1 expected %d deliveries, want 20 messages × 2 endpoints = 40", tr.Name, got)
		}
		if tr.B1.RecordedDelivered != 40 {
			t.Errorf("%s B1: store records %d delivered, want 40", tr.Name, tr.B1.RecordedDelivered)
		}
		if got := tr.B2.WithHanging.Receiver; got.Expected != 10 || got.HangingRequests == 0 {
			t.Errorf("%s B2 with hanging: %+v, want 10 healthy deliveries and requests to the hanging endpoint", tr.Name, got)
		}
		if got := tr.B2.Baseline.Receiver.HangingRequests; got != 0 {
			t.Errorf("%s B2 baseline: %d requests to a hanging endpoint, want none", tr.Name, got)
		}
		if got := tr.B3.Receiver.Expected; got != 5 {
			t.Errorf("%s B3 expected %d deliveries, want 5", tr.Name, got)
		}
	}

	// The fields a script reads.
	var top struct {
		Targets []map[string]json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatal(err)
	}
	var topKeys map[string]json.RawMessage
	if err := json.Unmarshal(out, &topKeys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "config", "machine", "targets", "problems"} {
		if _, ok := topKeys[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	want := map[string][]string{
		"b1": {"sendsPerSec", "sendP50Ms", "sendP99Ms", "deliveriesPerSec", "deliverSeconds", "targetDeliveriesPerSec", "deliveriesMet", "met", "receiver"},
		"b2": {"baseline", "withHanging", "ratio", "targetRatio", "met"},
		"b3": {"p50Ms", "p99Ms", "sendP50Ms", "targetP50Ms", "met", "receiver"},
	}
	for i, target := range top.Targets {
		name := rep.Targets[i].Name
		for _, k := range []string{"name", "description"} {
			if _, ok := target[k]; !ok {
				t.Errorf("JSON target %s lacks %q", name, k)
			}
		}
		for bench, fields := range want {
			var m map[string]any
			if err := json.Unmarshal(target[bench], &m); err != nil {
				t.Fatalf("%s %s: %v", name, bench, err)
			}
			for _, f := range fields {
				if _, ok := m[f]; !ok {
					t.Errorf("JSON %s %s lacks %q", name, bench, f)
				}
			}
			if bench != "b1" {
				continue
			}
			// Only the API has a sends/s target.
			_, hasTarget := m["targetSendsPerSec"]
			_, hasMet := m["sendsMet"]
			if wantSends := name == "api"; hasTarget != wantSends || hasMet != wantSends {
				t.Errorf("JSON %s b1: targetSendsPerSec %v, sendsMet %v; want both %v", name, hasTarget, hasMet, wantSends)
			}
		}
	}
	if got := rep.Targets[1].B1.TargetSendsPerSec; got != b1TargetSendsPerSecAPI {
		t.Errorf("api B1 targetSendsPerSec = %g, want %g", got, b1TargetSendsPerSecAPI)
	}

	// Both SQLite targets run in this process: B1 reports its CPU and memory, and no server's.
	for _, tr := range rep.Targets {
		res := tr.B1.Resources
		if runtime.GOOS == "windows" {
			continue
		}
		if res == nil || res.ProcessCPUPerDeliveryUs <= 0 || res.ProcessMaxRSSKiB <= 0 || len(res.Servers) != 0 ||
			res.TotalCPUPerDeliveryUs == nil || *res.TotalCPUPerDeliveryUs != res.ProcessCPUPerDeliveryUs {
			t.Errorf("%s B1 resources = %+v, want this process's CPU and peak RSS alone, and as the total", tr.Name, res)
		}
	}

	// The text shows both targets side by side.
	text := rep.Text()
	for _, s := range []string{"figure  ", "library", "api", "api ≥ 1,000", "≥ 1,500", "≤ 1.2×", "p50 ≤ 20.0 ms", "every delivery arrived once, verified"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
}

// TestBenchPostgres runs every benchmark at a tiny size on the PostgreSQL targets, with the
// store's own queue and with the Redis queue, on the servers that HOOKD_TEST_POSTGRES_URL and
// HOOKD_TEST_REDIS_URL name. It checks that each delivery arrived once, verified, and that no
// run's schema, nor its Redis keys, is left. It asserts no speed.
func TestBenchPostgres(t *testing.T) {
	dbURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if dbURL == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL URL (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) to run the bench on PostgreSQL")
	}
	queueURL := os.Getenv("HOOKD_TEST_REDIS_URL")
	for _, target := range []string{"postgres", "postgres+redis"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			db := dbURL
			if target == "postgres" {
				// A pool parameter in the URL, as hookd serve takes it: the bench's own connections
				// must leave it out (the server refuses it as a setting).
				u, err := url.Parse(dbURL)
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				q.Set("pool_max_conns", "6")
				u.RawQuery = q.Encode()
				db = u.String()
			}
			args := []string{"--db", db, "--target", target, "--messages", "20", "--endpoints", "2", "--producers", "2", "--json"}
			queue := ""
			if target == "postgres+redis" {
				if queueURL == "" {
					t.Skip("HOOKD_TEST_REDIS_URL is unset: set it to a Redis URL (e.g. redis://127.0.0.1:6379/0) to run the bench with the Redis queue")
				}
				args = append(args, "--queue", queueURL)
				queue = queueURL
			}
			o := tinyOptions(t, db, queue)
			o.Targets = []string{target}
			rep, _ := runTiny(t, o, args)
			if len(rep.Targets) != 1 || rep.Targets[0].Name != target {
				t.Fatalf("targets = %+v, want %s alone", rep.Targets, target)
			}
			tr := rep.Targets[0]
			checkTinyDeliveries(t, tr)
			if tr.B1.TargetDeliveriesPerSec != b1TargetPerSecPostgres || tr.B3.TargetP50Ms != millis(b3TargetP50Postgres) {
				t.Errorf("targets: B1 %g/s, B3 p50 %g ms; want PostgreSQL's %g/s and %g ms", tr.B1.TargetDeliveriesPerSec, tr.B3.TargetP50Ms, b1TargetPerSecPostgres, millis(b3TargetP50Postgres))
			}
			if res := tr.B1.Resources; runtime.GOOS != "windows" && (res == nil || res.ProcessCPUPerDeliveryUs <= 0) {
				t.Errorf("B1 resources = %+v, want this process's CPU at least", res)
			} else if res != nil {
				for _, s := range res.Servers {
					if s.Name != "postgres" && (s.Name != "redis-server" || target != "postgres+redis") || s.Processes == 0 {
						t.Errorf("B1 resources: server %+v, want postgres processes (and redis-server with the Redis queue)", s)
					}
					// The run's own backends are told apart from the server's others.
					if s.Name == "postgres" && (s.Run == nil || s.Run.Processes == 0 || s.Run.Processes > s.Processes) {
						t.Errorf("B1 resources: postgres %+v, want the run's own backends among them", s)
					}
				}
			}

			// One schema per run, and one namespace per run with the Redis queue, all gone.
			wantNamespaces := 0
			if target == "postgres+redis" {
				wantNamespaces = 5
			}
			if rep.Run == "" || len(tr.Schemas) != 5 || len(tr.Namespaces) != wantNamespaces {
				t.Fatalf("run %q, schemas %v, namespaces %v; want a run id, 5 schemas and %d namespaces", rep.Run, tr.Schemas, tr.Namespaces, wantNamespaces)
			}
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var left []string
			rows, err := conn.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname = ANY($1) OR nspname LIKE $2",
				tr.Schemas, "bench\\_"+rep.Run+"\\_%")
			if err == nil {
				left, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(left) > 0 {
				t.Errorf("schemas left after the run: %v", left)
			}
			if wantNamespaces == 0 {
				return
			}
			rdb, err := benchRedisClient(queueURL)
			if err != nil {
				t.Fatal(err)
			}
			defer rdb.Close()
			queues, err := asynq.NewInspectorFromRedisClient(rdb).Queues()
			if err != nil {
				t.Fatal(err)
			}
			for _, ns := range tr.Namespaces {
				keys, err := benchNamespaceKeys(ctx, rdb, ns)
				if err != nil {
					t.Fatal(err)
				}
				if len(keys) > 0 {
					t.Errorf("namespace %s: keys left after the run: %v", ns, keys)
				}
				for _, q := range queues {
					if strings.HasPrefix(q, ns+":") {
						t.Errorf("namespace %s: asynq still lists queue %s", ns, q)
					}
				}
			}
		})
	}
}

// tinyOptions are the options of a test run: 20 messages to 2 endpoints from 2 producers, the
// tiny sizes of B2 and B3, and the PostgreSQL and Redis URLs given ("": none).
func tinyOptions(t *testing.T, dbURL, queueURL string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Messages, o.Endpoints, o.Producers, o.DBURL, o.QueueURL = 20, 2, 2, dbURL, queueURL
	if err := o.Check(strings.Join(o.Only, ","), ""); err != nil {
		t.Fatal(err)
	}
	o.B2Messages, o.B2Timeout, o.B3Sends, o.B4Messages, o.Stall = 10, 200*time.Millisecond, 5, 20, 10*time.Second
	return o
}

// runTiny runs o with the command line args and returns its report as --json prints it, decoded,
// and the JSON. A problem in the report fails the test.
func runTiny(t *testing.T, o Options, args []string) (*Report, []byte) {
	t.Helper()
	got, err := Run(context.Background(), o, args)
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if len(rep.Problems) != 0 {
		t.Errorf("problems: %v", rep.Problems)
	}
	return &rep, out
}

// checkTinyDeliveries checks that every benchmark of a run by runTinyBench with 20 messages to 2
// endpoints delivered every message once, verified.
func checkTinyDeliveries(t *testing.T, tr *benchTargetReport) {
	t.Helper()
	if tr.B1 == nil || tr.B2 == nil || tr.B3 == nil || tr.B4 == nil {
		t.Fatalf("%s: B1 %v, B2 %v, B3 %v, B4 %v; want all four", tr.Name, tr.B1, tr.B2, tr.B3, tr.B4)
	}
	if tr.B4.OutOfOrder != 0 {
		t.Errorf("%s B4: %d messages arrived before an earlier one", tr.Name, tr.B4.OutOfOrder)
	}
	for _, c := range []struct {
		name     string
		counts   benchCounts
		expected int
	}{
		{"B1", tr.B1.Receiver, 40}, {"B2 baseline", tr.B2.Baseline.Receiver, 10},
		{"B2 with hanging", tr.B2.WithHanging.Receiver, 10}, {"B3", tr.B3.Receiver, 5}, {"B4", tr.B4.Receiver, 20},
	} {
		if got := c.counts; got.Expected != c.expected || got.Delivered != c.expected || got.Unverified != 0 || got.Duplicates != 0 {
			t.Errorf("%s %s: %+v, want %d deliveries, each verified, once", tr.Name, c.name, got, c.expected)
		}
	}
	if tr.B1.RecordedDelivered != 40 {
		t.Errorf("%s B1: store records %d delivered, want 40", tr.Name, tr.B1.RecordedDelivered)
	}
	if got := tr.B2.WithHanging.Receiver.HangingRequests; got == 0 {
		t.Errorf("%s B2 with hanging: no request to the hanging endpoint", tr.Name)
	}
}

// TestBenchTargetAPI runs B3 through the API alone: the target works without the library's runs.
func TestBenchTargetAPI(t *testing.T) {
	o := DefaultOptions()
	if err := o.Check("B3", "api"); err != nil {
		t.Fatal(err)
	}
	o.B3Sends, o.Stall = 3, 10*time.Second
	rep, _ := runTiny(t, o, []string{"--target", "api", "--only", "B3", "--json"})
	if len(rep.Targets) != 1 || rep.Targets[0].Name != "api" {
		t.Fatalf("targets = %+v, want api alone", rep.Targets)
	}
	tr := rep.Targets[0]
	if tr.B1 != nil || tr.B2 != nil || tr.B3 == nil {
		t.Fatalf("api: B1 %v, B2 %v, B3 %v; want B3 alone", tr.B1, tr.B2, tr.B3)
	}
	if c := tr.B3.Receiver; c.Expected != 3 || c.Delivered != 3 || c.Unverified != 0 || c.Duplicates != 0 {
		t.Errorf("api B3: %+v, want 3 deliveries verified, once", c)
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}, {0, 1}} {
		if got := percentile(ds, tc.p); got != tc.want {
			t.Errorf("percentile(%g) = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of nothing = %d, want 0", got)
	}
}

// TestBenchTargetsDefault checks that --target defaults to every target --db and --queue make
// available.
func TestBenchTargetsDefault(t *testing.T) {
	t.Parallel()
	const db, queue = "postgres://postgres@127.0.0.1:5432/postgres", "redis://127.0.0.1:6379/0"
	for _, tc := range []struct {
		db, queue, target string
		want              []string
	}{
		{"", "", "", []string{"library", "api"}},
		{db, "", "", []string{"library", "api", "postgres"}},
		{db, queue, "", []string{"library", "api", "postgres", "postgres+redis"}},
		{db, queue, "POSTGRES+REDIS,library", []string{"library", "postgres+redis"}},
	} {
		o := DefaultOptions()
		o.DBURL, o.QueueURL = tc.db, tc.queue
		if err := o.Check("B1", tc.target); err != nil {
			t.Errorf("db %q, queue %q, target %q: %v", tc.db, tc.queue, tc.target, err)
			continue
		}
		if !slices.Equal(o.Targets, tc.want) {
			t.Errorf("db %q, queue %q, target %q: targets %v, want %v", tc.db, tc.queue, tc.target, o.Targets, tc.want)
		}
	}
}

func TestRedactBenchArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--db", "postgres://u:secret@h/db", "--queue=redis://:pw@h:6379/0"},
			[]string{"--db", "postgres://u:xxxxx@h/db", "--queue=redis://:xxxxx@h:6379/0"}},
		{[]string{"-db=postgres://u@h/db", "--messages", "10"}, []string{"-db=postgres://u@h/db", "--messages", "10"}},
		{[]string{"--queue"}, []string{"--queue"}},
	} {
		if got := redactBenchArgs(tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("redactBenchArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
