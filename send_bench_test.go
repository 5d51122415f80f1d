package hookd_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/procmem"
	"github.com/hookd/hookd/postgres"
)

// BenchmarkSendPostgres sends from 8 goroutines at once through Client.Send on PostgreSQL, to an
// application with 10 endpoints (HOOKD_BENCH_ENDPOINTS), with event ids, a channel and a tag: the library's send path
// (the sends batch as concurrent Sends do), nothing delivered (the client is not started). Beside
// sends/s, which depend on what else the machine runs, it reports the CPU time per send of this
// process and of the PostgreSQL backends of the store's connections (the server must run on this
// machine), which depend less on it.
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run '^$' -bench SendPostgres -benchtime 4000x .
func BenchmarkSendPostgres(b *testing.B) {
	u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if u == "" {
		b.Skip("HOOKD_TEST_POSTGRES_URL is unset")
	}
	ctx := context.Background()
	schema := testSchema(b, u)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	store, err := postgres.Open(ctx, u+sep+"application_name="+schema, &postgres.Config{Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	c, err := hookd.NewClient(store, testConfig())
	if err != nil {
		b.Fatal(err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchEndpoints() {
		if _, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: fmt.Sprintf("https://example.com/%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	send := func() error {
		i := n.Add(1)
		_, err := c.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: fmt.Sprintf("evt-%d", i),
			Channels: []string{"eu"}, Tags: []string{"t"}, Payload: map[string]int64{"n": i}})
		return err
	}
	var wg sync.WaitGroup
	for range 8 { // the pool's connections open, the statements are prepared
		wg.Go(func() {
			for range 20 {
				if err := send(); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	backends := func() (d time.Duration) {
		rows, err := store.Pool().Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, schema)
		if err != nil {
			b.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			b.Fatal(err)
		}
		for _, pid := range pids {
			cpu, err := procmem.CPU(int(pid))
			if err != nil {
				b.Skipf("the PostgreSQL backends' CPU time: %v (the server must run on this machine)", err)
			}
			d += cpu
		}
		return d
	}
	self := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	pgBefore, selfBefore := backends(), self()
	b.SetParallelism(4) // 8 goroutines on 2 CPUs
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := send(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
	b.ReportMetric(float64((self()-selfBefore).Microseconds())/float64(b.N), "client-µs/send")
	b.ReportMetric(float64((backends()-pgBefore).Microseconds())/float64(b.N), "postgres-µs/send")
}

// benchEndpoints is the number of endpoints of BenchmarkSendPostgres: HOOKD_BENCH_ENDPOINTS, or 10.
func benchEndpoints() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("HOOKD_BENCH_ENDPOINTS"), &n); err != nil || n < 0 {
		return 10
	}
	return n
}
