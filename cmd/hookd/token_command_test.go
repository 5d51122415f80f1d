package main

import (
	"database/sql"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServePortTakenStoresNoToken: a serve that cannot bind its port exits non-zero before it
// stores an admin token, so the next start on that database generates and prints one.
func TestServePortTakenStoresNoToken(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	db := filepath.Join(t.TempDir(), "hookd.db")

	r := run(t, "", "serve", "--listen", held.Addr().String(), "--db", db, "--workers", "1")
	if r.code == exitOK {
		t.Fatalf("serve on a taken port exited 0; stderr:\n%s", r.stderr)
	}
	if adminTokenRE.MatchString(r.stderr) {
		t.Errorf("the failed start printed a token:\n%s", r.stderr)
	}

	s := startServe(t, "--listen", "127.0.0.1:0", "--db", db, "--workers", "1")
	m := adminTokenRE.FindStringSubmatch(s.stderr.String())
	if m == nil {
		t.Fatalf("the start after the failed one printed no admin token; stderr:\n%s", s.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, s.url+"/api/v1/app", m[1], "")
	s.stop(t)
}

// TestTokenRotateSQLite: token rotate prints a token that a later serve accepts, and the
// previous one is refused.
func TestTokenRotateSQLite(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "hookd.db")
	testTokenRotate(t, db)
}

// TestTokenRotatePostgres is TestTokenRotateSQLite on PostgreSQL.
func TestTokenRotatePostgres(t *testing.T) {
	t.Parallel()
	testTokenRotate(t, freshDatabase(t))
}

func testTokenRotate(t *testing.T, db string) {
	t.Helper()
	args := []string{"--listen", "127.0.0.1:0", "--db", db, "--workers", "1"}
	first := startServe(t, args...)
	m := adminTokenRE.FindStringSubmatch(first.stderr.String())
	if m == nil {
		t.Fatalf("no admin token printed; stderr:\n%s", first.stderr)
	}
	old := m[1]
	first.stop(t)

	r := run(t, "", "token", "rotate", "--db", db)
	if r.code != exitOK {
		t.Fatalf("token rotate: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	token := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(token, "hookd_sk_") || strings.Contains(token, "\n") || token == old {
		t.Fatalf("token rotate printed %q, want one new hookd_sk_ token", r.stdout)
	}
	if strings.Contains(r.stderr, token) {
		t.Errorf("the token is on stderr too: %q", r.stderr)
	}

	second := startServe(t, args...)
	if strings.Contains(second.stderr.String(), "admin token") {
		t.Errorf("serve after a rotation printed a token:\n%s", second.stderr)
	}
	mustCall(t, http.StatusOK, http.MethodGet, second.url+"/api/v1/app", token, "")
	if code, body := call(t, http.MethodGet, second.url+"/api/v1/app", old, ""); code != http.StatusUnauthorized {
		t.Errorf("the previous token: %d %s, want 401", code, body)
	}
	second.stop(t)
}

// TestTokenRotateRefusesMissingDatabase: a --db that names no file, or a file without hookd's
// schema, is refused, and nothing is created.
func TestTokenRotateRefusesMissingDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	r := run(t, "", "token", "rotate", "--db", "sqlite:"+missing)
	if r.code != exitFailure || !strings.Contains(r.stderr, "no such file") || !strings.Contains(r.stderr, "hookd migrate") || r.stdout != "" {
		t.Errorf("missing file: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if m, _ := filepath.Glob(missing + "*"); len(m) != 0 {
		t.Errorf("token rotate created %v", m)
	}

	// A SQLite file that is not hookd's.
	empty := filepath.Join(dir, "other.db")
	if err := writeForeignSQLite(empty); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", "token", "rotate", "--db", "sqlite:"+empty)
	if r.code != exitFailure || !strings.Contains(r.stderr, "no hookd schema") || r.stdout != "" {
		t.Errorf("foreign file: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestTokenRotateRefusesUnmigratedPostgres: a PostgreSQL database without hookd's schema is
// refused and left without it.
func TestTokenRotateRefusesUnmigratedPostgres(t *testing.T) {
	t.Parallel()
	db := freshDatabase(t)
	r := run(t, "", "token", "rotate", "--db", db)
	if r.code != exitFailure || !strings.Contains(r.stderr, "no hookd schema") || r.stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, "", "token", "rotate", "--db", db); !strings.Contains(r.stderr, "no hookd schema") {
		t.Errorf("a second try found a schema: %q", r.stderr)
	}
}

// writeForeignSQLite makes path an SQLite database with one table that is not hookd's.
func writeForeignSQLite(path string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE notes (body text)`)
	return err
}
