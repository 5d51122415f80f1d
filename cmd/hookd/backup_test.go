package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackupUnderLoadRestores runs "hookd serve" (the binary) on a SQLite file, sends messages
// through the API from 4 producers to two endpoints on 127.0.0.1, one of which refuses every
// request so that its deliveries stay pending, and runs "hookd backup" while the messages go in.
// Then it stops serve, puts the copy in place of the database in a fresh directory, lets the
// refusing endpoint take requests, and starts serve on the copy: every message accepted before
// the backup began is there through the API, and every delivery pending in the copy is
// delivered.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two serve processes for about 20 s")
	}
	t.Parallel()
	bin := buildHookd(t)
	var refusing atomic.Bool
	refusing.Store(true)
	recv := newFlakyReceiver(func(path string, _ int) bool { return path == "/down" && refusing.Load() })
	defer recv.srv.Close()
	common := []string{"--token", testAdminToken, "--allow-subnets", "127.0.0.0/8", "--timeout", "2s",
		"--retry-schedule", strings.TrimSuffix(strings.Repeat("1s,", 60), ",")}
	dir := t.TempDir()
	live := filepath.Join(dir, "hookd.db")
	p := startProcess(t, bin, append([]string{"--db", "sqlite:" + live}, common...)...)
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"backup","uid":"backup"}`)
	for _, path := range []string{"/up", "/down"} {
		mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/backup/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s%s"}`, recv.srv.URL, path))
	}

	// Producers send until stopped; each accepted message is kept with the time its answer came.
	type accepted struct {
		id string
		at time.Time
	}
	var (
		mu     sync.Mutex
		sent   []accepted
		stop   atomic.Bool
		seq    atomic.Int64
		wg     sync.WaitGroup
		client = &http.Client{Timeout: 10 * time.Second}
	)
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				i := seq.Add(1)
				body := fmt.Sprintf(`{"eventType":"backup.test","eventId":"bk-%d","payload":{"seq":%d}}`, i, i)
				code, id := crashCall(client, http.MethodPost, p.url+"/api/v1/app/backup/msg", body)
				if code != http.StatusAccepted || id == "" {
					t.Errorf("send %d: status %d", i, code)
					return
				}
				mu.Lock()
				sent = append(sent, accepted{id, time.Now()})
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(sent)
	}
	for count() < 300 && !t.Failed() {
		time.Sleep(10 * time.Millisecond)
	}

	out := filepath.Join(dir, "backup.db")
	began := time.Now()
	backupOut, err := exec.Command(bin, "backup", "--db", "sqlite:"+live, out).CombinedOutput()
	ended := time.Now()
	if err != nil {
		t.Fatalf("hookd backup: %v\n%s", err, backupOut)
	}
	if !strings.Contains(string(backupOut), "backed up to "+out) {
		t.Errorf("hookd backup printed %q", backupOut)
	}
	atBackup := count()
	for count() < atBackup+300 && !t.Failed() {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	p.terminate(t, 30*time.Second)
	if t.Failed() {
		return
	}

	// The copy's pending deliveries, by receiver key ("path msg_id") and delivery id.
	copied, err := sql.Open("sqlite", "file:"+out+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]string{}
	rows, err := copied.Query(`SELECT d.id, d.message_id, e.url FROM hookd_deliveries d
		JOIN hookd_endpoints e ON e.id = d.endpoint_id WHERE d.status = 'pending'`)
	if err != nil {
		t.Fatal(err)
	}
	var downPending int
	for rows.Next() {
		var id, msg, url string
		if err := rows.Scan(&id, &msg, &url); err != nil {
			t.Fatal(err)
		}
		path := strings.TrimPrefix(url, recv.srv.URL)
		pending[path+" "+msg] = id
		if path == "/down" {
			downPending++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var inCopy int
	if err := copied.QueryRow(`SELECT count(*) FROM hookd_messages`).Scan(&inCopy); err != nil {
		t.Fatal(err)
	}
	copied.Close()

	// Restore: the copy alone, in a fresh directory.
	restored := filepath.Join(t.TempDir(), "hookd.db")
	copyFile(t, out, restored)
	// The receiver forgets what it saw: each delivery pending in the copy must arrive again.
	recv.mu.Lock()
	clear(recv.seen)
	recv.mu.Unlock()
	refusing.Store(false)
	p2 := startProcess(t, bin, append([]string{"--db", "sqlite:" + restored}, common...)...)

	mu.Lock()
	all := sent
	mu.Unlock()
	before, after, afterInCopy := 0, 0, 0
	for _, a := range all {
		code, _ := call(t, http.MethodGet, p2.url+"/api/v1/app/backup/msg/"+a.id, testAdminToken, "")
		switch {
		case a.at.Before(began):
			before++
			if code != http.StatusOK {
				t.Errorf("message %s, accepted before the backup began: GET is %d after the restore", a.id, code)
			}
		default:
			after++
			if code == http.StatusOK {
				afterInCopy++
			}
		}
	}
	if downPending < before {
		t.Errorf("%d deliveries to the refusing endpoint pending in the copy, want at least %d (one a message accepted before the backup)", downPending, before)
	}

	deadline := time.Now().Add(2 * time.Minute)
	for {
		recv.mu.Lock()
		missing := 0
		for key := range pending {
			if recv.seen[key] == 0 {
				missing++
			}
		}
		recv.mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d deliveries pending in the copy did not arrive within 2 min of the restore", missing, len(pending))
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let the last attempts be recorded
	p2.terminate(t, 30*time.Second)

	db, err := sql.Open("sqlite", "file:"+restored+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	notDelivered := 0
	for _, id := range pending {
		var status string
		if err := db.QueryRow(`SELECT status FROM hookd_deliveries WHERE id = ?`, id).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != "delivered" {
			notDelivered++
		}
	}
	if notDelivered > 0 {
		t.Errorf("%d of the %d deliveries pending in the copy are not delivered after the restore", notDelivered, len(pending))
	}
	t.Logf("backup took %v under load: %s", ended.Sub(began).Round(time.Millisecond), strings.TrimSpace(string(backupOut)))
	t.Logf("%d messages accepted before the backup began; %d accepted after, %d of them in the copy (%d messages in it); "+
		"%d deliveries pending in the copy (%d to the refusing endpoint), all delivered after the restore",
		before, after, afterInCopy, inCopy, len(pending), downPending)
}

// copyFile copies the file src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRefusals: an OUT that exists without --force (left as it was), a database that is not
// there (nothing created), no OUT, and a PostgreSQL --db (the pg_dump command, no password) are
// refused with what to do; --force replaces OUT.
func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookd.db")
	s := startServe(t, "--listen", "127.0.0.1:0", "--db", path, "--token", testAdminToken, "--workers", "1")
	db := "--db=sqlite:" + path
	out := filepath.Join(dir, "old.db")
	if err := os.WriteFile(out, []byte("an older backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "backup", db, out); r.code != exitFailure || !strings.Contains(r.stderr, "--force") || r.stdout != "" {
		t.Errorf("an existing OUT: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "an older backup" {
		t.Errorf("the refused OUT changed: %q", b)
	}
	if r := run(t, "", "backup", db, "--force", out); r.code != exitOK || !strings.Contains(r.stdout, "quick_check ok") {
		t.Errorf("--force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "backup", db, "--full-check", filepath.Join(dir, "full.db")); r.code != exitOK || !strings.Contains(r.stdout, "integrity_check ok") {
		t.Errorf("--full-check: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "backup", db, "--force", path); r.code != exitFailure || !strings.Contains(r.stderr, "database's own file") {
		t.Errorf("OUT is the database: exit %d, stderr %q", r.code, r.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app", testAdminToken, "")

	missing := filepath.Join(dir, "typo.db")
	if r := run(t, "", "backup", "--db=sqlite:"+missing, filepath.Join(dir, "x.db")); r.code != exitFailure || !strings.Contains(r.stderr, "check --db") {
		t.Errorf("a database that is not there: exit %d, stderr %q", r.code, r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "[tx]*")); len(m) != 0 {
		t.Errorf("the refusal created %v", m)
	}
	if r := run(t, "", "backup", db); r.code != exitUsage || !strings.Contains(r.stderr, "missing OUT") {
		t.Errorf("no OUT: exit %d, stderr %q", r.code, r.stderr)
	}
	r := run(t, "", "backup", "--db", "postgres://hookd:s3cret@db.internal:5432/hookd?sslmode=require", "hookd.dump")
	if r.code != exitUsage || strings.Contains(r.stderr, "s3cret") ||
		!strings.Contains(r.stderr, "pg_dump --format=custom --file=hookd.dump --dbname='postgres://hookd@db.internal:5432/hookd?sslmode=require'") {
		t.Errorf("a PostgreSQL --db: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestPgDumpCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, out, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "hookd.dump",
			"pg_dump --format=custom --file=hookd.dump --dbname='postgres://u@h:5432/db?sslmode=disable'"},
		{"postgresql://h/db?search_path=hookd&pool_max_conns=20", "/backups/hookd 1.dump",
			"pg_dump --format=custom --file='/backups/hookd 1.dump' --schema=hookd --dbname=postgresql://h/db"},
		{"postgres://u@h/db?application_name=x&search_path=tenant_a", "it's.dump",
			`pg_dump --format=custom --file='it'\''s.dump' --schema=tenant_a --dbname='postgres://u@h/db?application_name=x'`},
	} {
		if got := pgDumpCommand(tc.url, tc.out); got != tc.want {
			t.Errorf("pgDumpCommand(%q, %q)\n got %s\nwant %s", tc.url, tc.out, got, tc.want)
		}
	}
}
