package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/sqlite"
)

// BenchmarkBackupBesideSends measures what "hookd backup" costs the sends of a "hookd serve"
// running on the same SQLite file. The file is filled first with HOOKD_BACKUP_BENCH_MESSAGES
// messages (default 1,000,000) of about 650 bytes of payload, each with one delivered delivery
// and its attempt (about 1 GiB). Then 8 producers send messages through the API, each to one
// endpoint of a receiver in this process, for 15 s alone, then while the backup runs, then for
// 15 s after it; each phase's sends/s and latency are logged and reported. Run it with
//
//	go test -run x -bench BackupBesideSends -benchtime 1x -timeout 30m ./cmd/hookd/
func BenchmarkBackupBesideSends(b *testing.B) {
	messages := 1_000_000
	if v := os.Getenv("HOOKD_BACKUP_BENCH_MESSAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("HOOKD_BACKUP_BENCH_MESSAGES=%q: want a positive number", v)
		}
		messages = n
	}
	bin := buildHookd(b)
	dir := b.TempDir()
	path := filepath.Join(dir, "hookd.db")
	start := time.Now()
	fillForBackup(b, path, messages)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("filled %d messages, %s, in %v", messages, byteSize(fi.Size()), time.Since(start).Round(time.Second))

	for range b.N {
		recv := newFleetReceiver()
		p := startProcess(b, bin, "--db", "sqlite:"+path, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8",
			"--max-messages-per-second-per-app", "none")
		mustCall(b, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"bench","uid":"bench"}`)
		mustCall(b, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/bench/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s/ep"}`, recv.srv.URL))

		var (
			mu    sync.Mutex
			sends []timedSend
			wg    sync.WaitGroup
		)
		ctx, stop := context.WithCancel(context.Background())
		client := &http.Client{Timeout: 30 * time.Second}
		for w := range 8 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					body := fmt.Sprintf(`{"eventType":"bench.backup","payload":{"producer":%d,"seq":%d}}`, w, i)
					began := time.Now()
					code, _ := crashCall(client, http.MethodPost, p.url+"/api/v1/app/bench/msg", body)
					ended := time.Now()
					mu.Lock()
					sends = append(sends, timedSend{ended, ended.Sub(began), code == http.StatusAccepted})
					mu.Unlock()
				}
			})
		}
		const phase = 15 * time.Second
		t0 := time.Now()
		time.Sleep(phase)
		t1 := time.Now()
		copyPath := filepath.Join(dir, fmt.Sprintf("backup-%d.db", time.Now().UnixNano()))
		out, err := exec.Command(bin, "backup", "--db", "sqlite:"+path, copyPath).CombinedOutput()
		t2 := time.Now()
		if err != nil {
			b.Fatalf("hookd backup: %v\n%s", err, out)
		}
		if wal, err := os.Stat(path + "-wal"); err == nil {
			b.Logf("the WAL is %s as the backup ends", byteSize(wal.Size()))
		}
		time.Sleep(phase)
		t3 := time.Now()
		if wal, err := os.Stat(path + "-wal"); err == nil {
			b.Logf("the WAL is %s %v after the backup", byteSize(wal.Size()), phase)
		}
		stop()
		wg.Wait()
		p.terminate(b, 30*time.Second)
		recv.srv.Close()

		b.Logf("hookd backup: %s", out)
		if n := countMessages(b, copyPath); n < messages {
			b.Errorf("the copy holds %d messages, fewer than the %d filled", n, messages)
		}
		if err := os.Remove(copyPath); err != nil {
			b.Error(err)
		}
		for _, ph := range []struct {
			name     string
			from, to time.Time
		}{{"alone", t0, t1}, {"during backup", t1, t2}, {"after", t2, t3}} {
			st := sendStats(sends, ph.from, ph.to)
			b.Logf("%-14s %5.1f s  %7.0f sends/s  p50 %6.1f ms  p99 %7.1f ms  max %7.1f ms (answered at +%.1f s)  %d refused",
				ph.name, ph.to.Sub(ph.from).Seconds(), st.rate, ms(st.p50), ms(st.p99), ms(st.max), st.maxAt.Sub(ph.from).Seconds(), st.refused)
			switch ph.name {
			case "alone":
				b.ReportMetric(st.rate, "sends/s-alone")
				b.ReportMetric(ms(st.p99), "p99-ms-alone")
			case "during backup":
				b.ReportMetric(st.rate, "sends/s-during")
				b.ReportMetric(ms(st.p99), "p99-ms-during")
				b.ReportMetric(ph.to.Sub(ph.from).Seconds(), "backup-s")
			}
		}
	}
}

// timedSend is one send: when its answer came, how long it took, and whether it was accepted.
type timedSend struct {
	at      time.Time
	took    time.Duration
	success bool
}

type phaseStats struct {
	rate          float64 // accepted sends a second
	p50, p99, max time.Duration
	maxAt         time.Time // when the slowest send was answered
	refused       int
}

// sendStats sums up the sends answered in [from, to).
func sendStats(sends []timedSend, from, to time.Time) phaseStats {
	var st phaseStats
	var took []time.Duration
	for _, s := range sends {
		if s.success && !s.at.Before(from) && s.at.Before(to) && s.took > st.max {
			st.max, st.maxAt = s.took, s.at
		}
		if s.at.Before(from) || !s.at.Before(to) {
			continue
		}
		if !s.success {
			st.refused++
			continue
		}
		took = append(took, s.took)
	}
	if len(took) == 0 {
		return st
	}
	slices.Sort(took)
	st.rate = float64(len(took)) / to.Sub(from).Seconds()
	st.p50 = took[len(took)/2]
	st.p99 = took[len(took)*99/100]
	return st
}

// countMessages counts the messages of the database at path, opened read-only.
func countMessages(b *testing.B, path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM hookd_messages`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fillForBackup writes n messages of about 650 bytes of payload into a new hookd database at path,
// each with one delivered delivery and its attempt, 1 ms apart up to now (within the retention
// period, which serve would otherwise clean up while it is measured).
func fillForBackup(b *testing.B, path string, n int) {
	b.Helper()
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		`INSERT INTO hookd_applications (id, name, created_at, updated_at) VALUES ('app_fill', 'fill', 0, 0)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?1)
		 INSERT INTO hookd_messages (id, app_id, event_type, payload, created_at)
		 SELECT printf('msg_fill%012d', i), 'app_fill', 'invoice.paid',
		   '{"invoice":' || i || ',"data":"' || hex(randomblob(310)) || '"}', ?2 - (?1 - i) * 1000 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?1)
		 INSERT INTO hookd_deliveries (id, message_id, endpoint_id, app_id, status, created_at, updated_at)
		 SELECT printf('dlv_fill%012d', i), printf('msg_fill%012d', i), printf('ep_fill%02d', i % 10), 'app_fill',
		   'delivered', ?2 - (?1 - i) * 1000, ?2 - (?1 - i) * 1000 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?1)
		 INSERT INTO hookd_attempts (id, delivery_id, message_id, endpoint_id, app_id, number, trigger_kind,
		   url, at, duration, status_code, success)
		 SELECT printf('atmpt_fill%012d', i), printf('dlv_fill%012d', i), printf('msg_fill%012d', i),
		   printf('ep_fill%02d', i % 10), 'app_fill', 1, 'scheduled', 'https://customer.example/hooks',
		   ?2 - (?1 - i) * 1000, 50, 200, 1 FROM n`,
	} {
		var args []any
		if q[0] == 'W' {
			args = []any{n, time.Now().UnixMicro()}
		}
		if _, err := s.DB().ExecContext(context.Background(), q, args...); err != nil {
			b.Fatal(err)
		}
	}
}
