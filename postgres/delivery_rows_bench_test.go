package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/procmem"
	"github.com/hookd/hookd/postgres"
)

// BenchmarkDeliveryRows counts what PostgreSQL does for each delivery that hookd makes with the
// store's own queue: b.N messages, each to 10 endpoints of a receiver that answers 204 at once,
// sent by 8 goroutines through Client.Send, every delivery's first attempt a success. It counts
// from the moment before the first send until the client has stopped and the store has closed
// (so that every backend has reported its statistics), and reports per delivery:
//
//   - wal-B, wal-records, wal-fpi: the server's WAL (pg_current_wal_lsn, pg_stat_wal), which
//     counts every database of the server, so run it on a server of its own for exact figures;
//   - statements, blks-hit, blks-dirtied: the top-level statements of the database and the shared
//     buffers they hit and dirtied, from pg_stat_statements when the extension is installed in the
//     database (and loaded: shared_preload_libraries); with -v, the statements one by one;
//   - jobs-inserted: rows inserted into hookd_jobs, and delivery-updates and hot-%: the updates
//     of hookd_deliveries and the share of them that were HOT (pg_stat_user_tables of the test's
//     schema, so exact on any server);
//   - delivery-heap-B: the size of hookd_deliveries' heap at the end;
//   - pg-cpu-µs: the CPU time of the server's processes (the postmaster, its children and the
//     children it reaped), when it runs on this machine and this process may read its /proc.
//
// Run it with
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run '^$' -bench DeliveryRows -benchtime 2000x ./postgres/
func BenchmarkDeliveryRows(b *testing.B) {
	const endpoints, senders = 10, 8
	bd := setup(b)
	ctx := context.Background()

	var served atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	want := int64(endpoints * b.N)
	client, recorded, done := deliveryBenchClient(b, bd, testLogger(b), recv.URL, endpoints, want)

	// The setup's connections exit, and so report their statistics, before the count begins.
	bd.store.Pool().Reset()
	postgres.AsyncPool(bd.store).Reset()
	mon, err := pgx.Connect(ctx, bd.url)
	if err != nil {
		b.Fatal(err)
	}
	defer mon.Close(ctx)
	before := readRowCounters(b, mon, bd.schema)

	b.ResetTimer()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		left atomic.Int64
		errs = make(chan error, senders)
	)
	left.Store(int64(b.N))
	payload := json.RawMessage(`{"type":"bench.event","data":{"n":1}}`)
	for range senders {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := client.Send(ctx, "bench", &hookd.MessageIn{EventType: "bench.event", Payload: payload}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d deliveries recorded delivered after 5 minutes", recorded.Load(), want)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		b.Fatal(err)
	}
	_ = bd.store.Close() // every backend reports its statistics as it exits
	b.StopTimer()
	after := readRowCounters(b, mon, bd.schema)

	var heap int64
	if err := mon.QueryRow(ctx, `SELECT pg_relation_size(format('%I.hookd_deliveries', $1::text)::regclass)`, bd.schema).Scan(&heap); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(heap)/float64(want), "delivery-heap-B/delivery")
	if n := served.Load(); n < want {
		b.Fatalf("the receiver got %d requests, want at least %d", n, want)
	}
	after.report(b, before, float64(want))
}

// rowCounters are the server's counters that BenchmarkDeliveryRows reads before and after.
type rowCounters struct {
	walBytes, walRecords, walFPI   int64
	jobsInserted, updates, hotUpds int64
	cpuTicks                       int64 // -1: unknown
	statements                     map[int64]statementCounters
}

type statementCounters struct {
	query                      string
	calls, hit, dirtied, walRs int64
}

// readRowCounters reads the counters, waiting for the statistics of the backends that exited to
// reach the shared statistics.
func readRowCounters(b *testing.B, c *pgx.Conn, schema string) rowCounters {
	b.Helper()
	ctx := context.Background()
	var r rowCounters
	// Other backends' statistics reach the shared ones as they exit or go idle; a second's wait
	// lets those that exited report.
	time.Sleep(1500 * time.Millisecond)
	if _, err := c.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		b.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::bigint, wal_records, wal_fpi FROM pg_stat_wal`).Scan(&r.walBytes, &r.walRecords, &r.walFPI); err != nil {
		b.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT
		coalesce((SELECT n_tup_ins FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'hookd_jobs'), 0),
		coalesce((SELECT n_tup_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'hookd_deliveries'), 0),
		coalesce((SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'hookd_deliveries'), 0)`,
		schema).Scan(&r.jobsInserted, &r.updates, &r.hotUpds); err != nil {
		b.Fatal(err)
	}
	r.cpuTicks = serverTicks(ctx, c)
	var installed bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements')`).Scan(&installed); err != nil {
		b.Fatal(err)
	}
	if !installed {
		return r
	}
	rows, err := c.Query(ctx, `SELECT queryid, query, calls, shared_blks_hit + shared_blks_read, shared_blks_dirtied, wal_records
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND toplevel AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_backend_pid%'`)
	if err != nil {
		b.Logf("pg_stat_statements: %v", err)
		return r
	}
	defer rows.Close()
	r.statements = map[int64]statementCounters{}
	for rows.Next() {
		var id int64
		var s statementCounters
		if err := rows.Scan(&id, &s.query, &s.calls, &s.hit, &s.dirtied, &s.walRs); err != nil {
			b.Fatal(err)
		}
		r.statements[id] = s
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return r
}

// serverTicks is the CPU time, in clock ticks, of the server's processes so far: the postmaster's
// own and its reaped children's, and its live children's; -1 when /proc does not show them.
func serverTicks(ctx context.Context, c *pgx.Conn) int64 {
	var backend int
	if err := c.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return -1
	}
	postmaster := parentPID(backend)
	if postmaster <= 0 {
		return -1
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(postmaster) + "/stat")
	if err != nil {
		return -1
	}
	_, own, children, ok := procmem.ParseStat(stat)
	if !ok {
		return -1
	}
	total := own + children
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentPID(pid) != postmaster {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if _, own, _, ok := procmem.ParseStat(stat); ok {
				total += own
			}
		}
	}
	return total
}

// parentPID is pid's parent, or 0 when /proc does not say.
func parentPID(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return 0
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// report reports the counters' growth since before, per delivery of n.
func (r rowCounters) report(b *testing.B, before rowCounters, n float64) {
	b.ReportMetric(float64(r.walBytes-before.walBytes)/n, "wal-B/delivery")
	b.ReportMetric(float64(r.walRecords-before.walRecords)/n, "wal-records/delivery")
	b.ReportMetric(float64(r.walFPI-before.walFPI)/n, "wal-fpi/delivery")
	b.ReportMetric(float64(r.jobsInserted-before.jobsInserted)/n, "jobs-inserted/delivery")
	upd := r.updates - before.updates
	b.ReportMetric(float64(upd)/n, "delivery-updates/delivery")
	if upd > 0 {
		b.ReportMetric(100*float64(r.hotUpds-before.hotUpds)/float64(upd), "hot-%")
	}
	if r.cpuTicks >= 0 && before.cpuTicks >= 0 {
		b.ReportMetric(float64(procmem.Ticks(r.cpuTicks-before.cpuTicks).Microseconds())/n, "pg-cpu-µs/delivery")
	}
	if r.statements == nil {
		return
	}
	type line struct {
		statementCounters
		id int64
	}
	var lines []line
	var total statementCounters
	for id, s := range r.statements {
		p := before.statements[id]
		d := statementCounters{query: s.query, calls: s.calls - p.calls, hit: s.hit - p.hit, dirtied: s.dirtied - p.dirtied, walRs: s.walRs - p.walRs}
		if d.calls == 0 {
			continue
		}
		lines = append(lines, line{d, id})
		total.calls, total.hit, total.dirtied, total.walRs = total.calls+d.calls, total.hit+d.hit, total.dirtied+d.dirtied, total.walRs+d.walRs
	}
	b.ReportMetric(float64(total.calls)/n, "statements/delivery")
	b.ReportMetric(float64(total.hit)/n, "blks-hit/delivery")
	b.ReportMetric(float64(total.dirtied)/n, "blks-dirtied/delivery")
	slices.SortFunc(lines, func(a, b line) int { return int(b.hit - a.hit) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "per delivery: calls, blocks hit, dirtied, WAL records; statement\n")
	for _, l := range lines {
		q := strings.Join(strings.Fields(l.query), " ")
		if len(q) > 110 {
			q = q[:110] + "…"
		}
		fmt.Fprintf(&sb, "%8.4f %8.2f %7.3f %7.3f  %s\n", float64(l.calls)/n, float64(l.hit)/n, float64(l.dirtied)/n, float64(l.walRs)/n, q)
	}
	b.Log(sb.String())
}
