package main

import (
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTokenRotateBesideServe: token rotate works on the SQLite file of a running hookd serve (a
// process of its own), and the running server stops taking the previous token and takes the new
// one.
func TestTokenRotateBesideServe(t *testing.T) {
	t.Parallel()
	bin := buildHookd(t)
	path := filepath.Join(t.TempDir(), "hookd.db")
	p := startProcess(t, bin, "--db", "sqlite:"+path, "--workers", "1")
	m := adminTokenRE.FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("serve printed no admin token:\n%s", p.log())
	}
	old := m[1]
	mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app", old, "")

	r := run(t, "", "token", "rotate", "--db", "sqlite:"+path)
	if r.code != exitOK {
		t.Fatalf("token rotate beside serve: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	token := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(token, adminTokenPrefix) || token == old {
		t.Fatalf("token rotate printed %q", r.stdout)
	}
	// The server caches a token it found valid for 2 s.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := call(t, http.MethodGet, p.url+"/api/v1/app", old, "")
		if code == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the previous token still answers %d 10 s after the rotation", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app", token, "")
	mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", token, `{"name":"after rotation"}`)
	p.terminate(t, 15*time.Second)
}

// TestEventsBesideServe: events list and redrive work on the SQLite file of a running hookd serve.
func TestEventsBesideServe(t *testing.T) {
	t.Parallel()
	bin := buildHookd(t)
	path, id := deadLetter(t)
	p := startProcess(t, bin, "--db", "sqlite:"+path, "--token", testAdminToken, "--workers", "1")
	db := "--db=sqlite:" + path
	if r := run(t, "", "events", "list", db); r.code != exitOK || !strings.Contains(r.stdout, id) {
		t.Fatalf("events list beside serve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "events", "redrive", db, id); r.code != exitOK || !strings.Contains(r.stdout, id+": pending again") {
		t.Fatalf("events redrive beside serve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "events", "list", db); r.code != exitOK || !strings.Contains(r.stdout, "no failed events") {
		t.Fatalf("events list after the redrive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app", testAdminToken, "")
	p.terminate(t, 15*time.Second)
}

// TestMaintenanceBesideServeRefusesOtherSchema: beside a running serve whose file records a
// migration this build lacks, or lacks one this build has, token rotate and events list refuse
// with what to do, and migrate neither migrates the file nor exits 0.
func TestMaintenanceBesideServeRefusesOtherSchema(t *testing.T) {
	t.Parallel()
	bin := buildHookd(t)
	path := filepath.Join(t.TempDir(), "hookd.db")
	p := startProcess(t, bin, "--db", "sqlite:"+path, "--token", testAdminToken, "--workers", "1")
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var last int
	if err := raw.QueryRow(`SELECT max(version) FROM hookd_migrations`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q, last); err != nil {
			t.Fatal(err)
		}
	}
	recorded := func() int {
		t.Helper()
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM hookd_migrations WHERE version = ?`, last).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	db := "--db=sqlite:" + path
	var name, checksum string
	var appliedAt int64
	if err := raw.QueryRow(`SELECT name, checksum, applied_at FROM hookd_migrations WHERE version = ?`, last).Scan(&name, &checksum, &appliedAt); err != nil {
		t.Fatal(err)
	}

	// The file's schema is this build's: migrate has nothing to do, and says so.
	if r := run(t, "", "migrate", db); r.code != exitOK || !strings.Contains(r.stdout, "schema up to date (hookd serve has the file open)") {
		t.Errorf("migrate beside serve with nothing pending: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A later release made the file.
	exec(`INSERT INTO hookd_migrations (version, name, applied_at) VALUES (? + 1000, 'later', 0)`)
	for _, args := range [][]string{{"token", "rotate", db}, {"events", "list", db}} {
		r := run(t, "", args...)
		if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "does not know") ||
			!strings.Contains(r.stderr, "run the release serve runs") {
			t.Errorf("%v beside a later release's file: exit %d, stdout %q, stderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	exec(`DELETE FROM hookd_migrations WHERE version = ? + 1000`)

	// An earlier release made the file (this build would migrate it).
	exec(`DELETE FROM hookd_migrations WHERE version = ?`)
	for _, args := range [][]string{{"token", "rotate", db}, {"events", "list", db}} {
		r := run(t, "", args...)
		if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "not applied") ||
			!strings.Contains(r.stderr, "stop hookd serve first (serve applies migrations at start)") {
			t.Errorf("%v beside an earlier release's file: exit %d, stdout %q, stderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, "", "migrate", db); r.code == exitOK {
		t.Errorf("migrate beside serve with a migration pending exited 0:\n%s%s", r.stdout, r.stderr)
	}
	if n := recorded(); n != 0 {
		t.Errorf("migration %d recorded %d times after the refusals: something migrated under serve", last, n)
	}
	if _, err := raw.Exec(`INSERT INTO hookd_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`,
		last, name, checksum, appliedAt); err != nil {
		t.Fatal(err)
	}

	if r := run(t, "", "events", "list", db); r.code != exitOK {
		t.Errorf("events list once the schema is this build's again: exit %d\n%s", r.code, r.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app", testAdminToken, "")
	p.terminate(t, 15*time.Second)
}
