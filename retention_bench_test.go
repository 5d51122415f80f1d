package hookd_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// BenchmarkRetentionSweep measures what a retention sweep costs the sends beside it. It fills a
// store through Client.Send with HOOKD_BENCH_RETENTION_N messages (default 2,000) created 40 days
// ago (Config.Now in the past), each to 3 endpoints of one application on a receiver on
// 127.0.0.1 that answers 200, delivered by the client's workers (deliveries and attempts
// recorded); then, on a copy of that store, a started client sends HOOKD_BENCH_RETENTION_RATE
// messages a second (default 100, each in its own goroutine, to the same 3 endpoints, delivered)
// for HOOKD_BENCH_RETENTION_BASE (default 10 s) without a sweep, and then while a second client
// with Retention of 30 days sweeps every filled message (Client.DeleteOldMessages). It reports
// the sends' p50 and p99 without and during the sweep, their ratios, and the sweep's duration and
// rate. Senders, workers, receiver and sweep share this process; PostgreSQL runs beside it.
//
// The filled store is kept as a template when HOOKD_BENCH_RETENTION_DIR names a directory (the
// SQLite file retention-N.db there; on PostgreSQL the database hookd_retention_tpl_N), and a later
// run copies it instead of filling again: a template made by one build serves the runs of another,
// alternated, as long as the later build can open it.
//
//	HOOKD_BENCH_RETENTION_N=100000 HOOKD_BENCH_RETENTION_DIR=/tmp/ret go test -run '^$' -bench RetentionSweep/sqlite -benchtime 1x -timeout 2h .
func BenchmarkRetentionSweep(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchRetention(b, sqliteRetentionRig(b)) })
	b.Run("postgres", func(b *testing.B) {
		u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
		if u == "" {
			b.Skip("HOOKD_TEST_POSTGRES_URL is unset")
		}
		benchRetention(b, postgresRetentionRig(b, u))
	})
}

// retentionRig opens the stores of BenchmarkRetentionSweep: fill opens the store to fill (nil
// when a template is kept and filled already), run opens the copy measured.
type retentionRig struct {
	fill func() hookd.Store
	done func() // after fill's store closed: keep it as the template
	run  func() hookd.Store
}

func retentionEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func sqliteRetentionRig(b *testing.B) retentionRig {
	ctx := context.Background()
	n := retentionEnv("HOOKD_BENCH_RETENTION_N", 2000)
	dir := os.Getenv("HOOKD_BENCH_RETENTION_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	tpl := filepath.Join(dir, fmt.Sprintf("retention-%d.db", n))
	open := func(path string) hookd.Store {
		s, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	r := retentionRig{run: func() hookd.Store {
		run := filepath.Join(b.TempDir(), "run.db")
		if err := copyFile(tpl, run); err != nil {
			b.Fatal(err)
		}
		return open(run)
	}}
	if _, err := os.Stat(tpl); err != nil {
		r.fill = func() hookd.Store { return open(tpl + ".filling") }
		r.done = func() {
			if err := os.Rename(tpl+".filling", tpl); err != nil {
				b.Fatal(err)
			}
		}
	}
	return r
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func postgresRetentionRig(b *testing.B, u string) retentionRig {
	ctx := context.Background()
	n := retentionEnv("HOOKD_BENCH_RETENTION_N", 2000)
	keep := os.Getenv("HOOKD_BENCH_RETENTION_DIR") != ""
	tpl := fmt.Sprintf("hookd_retention_tpl_%d", n)
	if !keep {
		tpl = fmt.Sprintf("hookd_retention_tpl_%d_%d", n, time.Now().UnixNano())
	}
	run := fmt.Sprintf("hookd_retention_run_%d", time.Now().UnixNano())
	admin := func(sql string) error {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	dbURL := func(db string) string {
		p, err := url.Parse(u)
		if err != nil {
			b.Fatal(err)
		}
		p.Path = "/" + db
		return p.String()
	}
	open := func(db string) hookd.Store {
		s, err := postgres.Open(ctx, dbURL(db), nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	b.Cleanup(func() {
		if err := admin(`DROP DATABASE IF EXISTS ` + run + ` WITH (FORCE)`); err != nil {
			b.Error(err)
		}
		if !keep {
			if err := admin(`DROP DATABASE IF EXISTS ` + tpl + ` WITH (FORCE)`); err != nil {
				b.Error(err)
			}
		}
	})
	r := retentionRig{run: func() hookd.Store {
		if err := admin(`CREATE DATABASE ` + run + ` TEMPLATE ` + tpl); err != nil {
			b.Fatal(err)
		}
		return open(run)
	}}
	var exists bool
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, tpl).Scan(&exists)
	conn.Close(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if !exists {
		filling := tpl + "_filling"
		r.fill = func() hookd.Store {
			if err := admin(`DROP DATABASE IF EXISTS ` + filling + ` WITH (FORCE)`); err != nil {
				b.Fatal(err)
			}
			if err := admin(`CREATE DATABASE ` + filling); err != nil {
				b.Fatal(err)
			}
			return open(filling)
		}
		r.done = func() {
			if err := admin(`ALTER DATABASE ` + filling + ` RENAME TO ` + tpl); err != nil {
				b.Fatal(err)
			}
		}
	}
	return r
}

// retentionReceiver is a receiver on 127.0.0.1 that answers 200 and keeps nothing.
func retentionReceiver(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// retentionClient makes a client of store with now shifted by shift, started, with the
// application "acme" and its 3 endpoints on recv (made when missing).
func retentionClient(b *testing.B, store hookd.Store, recv string, shift time.Duration, retention time.Duration, start bool) *hookd.Client {
	ctx := context.Background()
	cfg := testConfig()
	cfg.Now = func() time.Time { return time.Now().Add(shift) }
	cfg.Retention = retention
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if start {
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Stop(context.Background()) })
	}
	return c
}

func retentionSetup(b *testing.B, c *hookd.Client, recv string) {
	ctx := context.Background()
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: fmt.Sprintf("%s/%d", recv, i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// pendingDeliveries counts the store's pending deliveries through its own database.
func pendingDeliveries(ctx context.Context, store hookd.Store) (int, error) {
	var n int
	switch s := store.(type) {
	case *sqlite.Store:
		return n, s.DB().QueryRowContext(ctx, `SELECT count(*) FROM hookd_deliveries WHERE status = 'pending'`).Scan(&n)
	case *postgres.Store:
		return n, s.Pool().QueryRow(ctx, `SELECT count(*) FROM hookd_deliveries WHERE status = 'pending'`).Scan(&n)
	}
	return 0, errors.New("unknown store")
}

func retentionMessage(i int64) *hookd.MessageIn {
	m := &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"n": i, "customer": "cus_0123456789", "amount": 4200}}
	if i%4 == 0 {
		m.Tags = []string{"t"}
	}
	if i%3 == 0 {
		m.Channels = []string{"eu"}
	}
	return m
}

func benchRetention(b *testing.B, rig retentionRig) {
	ctx := context.Background()
	recv := retentionReceiver(b)
	const shift = -40 * 24 * time.Hour
	if rig.fill != nil {
		n := retentionEnv("HOOKD_BENCH_RETENTION_N", 2000)
		store := rig.fill()
		c := retentionClient(b, store, recv, shift, 0, true)
		retentionSetup(b, c, recv)
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(n); i = next.Add(1) {
					if _, err := c.Send(ctx, "acme", retentionMessage(i)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for {
			p, err := pendingDeliveries(ctx, store)
			if err != nil {
				b.Fatal(err)
			}
			if p == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		took := time.Since(start)
		b.Logf("filled %d messages in %s (%.0f/s)", n, took.Round(time.Millisecond), float64(n)/took.Seconds())
		if err := c.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		if err := store.Close(); err != nil {
			b.Fatal(err)
		}
		rig.done()
	}
	store := rig.run()
	defer store.Close()
	// The app's endpoints point at the fill's receiver: this run's own take their place.
	sender := retentionClient(b, store, recv, 0, 0, true)
	eps, err := sender.ListEndpoints(ctx, "acme", hookd.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i, ep := range eps.Data {
		if _, err := sender.UpdateEndpoint(ctx, "acme", ep.ID, &hookd.EndpointIn{URL: fmt.Sprintf("%s/%d", recv, i)}); err != nil {
			b.Fatal(err)
		}
	}
	sweeper := retentionClient(b, store, recv, 0, 30*24*time.Hour, false)
	rate := retentionEnv("HOOKD_BENCH_RETENTION_RATE", 100)
	base := time.Duration(retentionEnv("HOOKD_BENCH_RETENTION_BASE", 10)) * time.Second

	var seq atomic.Int64
	seq.Store(1 << 40)
	// sendAtRate sends rate messages a second, each in its own goroutine, until stop closes, and
	// returns each send's time.
	sendAtRate := func(stop <-chan struct{}) []time.Duration {
		var (
			mu   sync.Mutex
			lats []time.Duration
			wg   sync.WaitGroup
		)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for running := true; running; {
			select {
			case <-stop:
				running = false
			case <-tick.C:
				wg.Go(func() {
					start := time.Now()
					if _, err := sender.Send(ctx, "acme", retentionMessage(seq.Add(1))); err != nil {
						b.Error(err)
						return
					}
					d := time.Since(start)
					mu.Lock()
					lats = append(lats, d)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		return lats
	}
	after := func(d time.Duration) <-chan struct{} {
		c := make(chan struct{})
		time.AfterFunc(d, func() { close(c) })
		return c
	}
	b.ResetTimer()
	sendAtRate(after(2 * time.Second)) // warm-up: connections, statements
	baseline := sendAtRate(after(base))
	stop := make(chan struct{})
	var (
		swept     hookd.RetentionCount
		sweepErr  error
		sweepTook time.Duration
	)
	go func() {
		defer close(stop)
		start := time.Now()
		swept, sweepErr = sweeper.DeleteOldMessages(ctx)
		sweepTook = time.Since(start)
	}()
	during := sendAtRate(stop)
	b.StopTimer()
	if sweepErr != nil {
		b.Fatal(sweepErr)
	}
	pct := func(l []time.Duration, p float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		slices.Sort(l)
		return l[min(len(l)-1, int(float64(len(l))*p))]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.Logf("swept %+v in %s; %d sends without the sweep, %d during it", swept, sweepTook.Round(time.Millisecond), len(baseline), len(during))
	b.ReportMetric(ms(pct(baseline, 0.50)), "base-p50-ms")
	b.ReportMetric(ms(pct(baseline, 0.99)), "base-p99-ms")
	b.ReportMetric(ms(pct(during, 0.50)), "sweep-p50-ms")
	b.ReportMetric(ms(pct(during, 0.99)), "sweep-p99-ms")
	b.ReportMetric(float64(pct(during, 0.99))/float64(pct(baseline, 0.99)), "p99-ratio")
	b.ReportMetric(sweepTook.Seconds(), "sweep-s")
	b.ReportMetric(float64(swept.Messages)/sweepTook.Seconds(), "swept-msgs/s")
	b.ReportMetric(0, "ns/op")
}
