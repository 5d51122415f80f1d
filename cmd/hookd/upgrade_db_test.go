package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql

	"github.com/hookd/hookd/internal/upgradetest"
)

// upgradeDB is a fixture's database, restored for one test: a copy of the SQLite file in
// t.TempDir(), or a PostgreSQL database of its own, dropped when the test ends.
type upgradeDB struct {
	store string
	flag  string // the --db of the binary under test
	path  string // SQLite: the file
}

// restoreFixture restores the database of the fixture in dir. On PostgreSQL it skips the test
// unless HOOKD_TEST_POSTGRES_URL names a server.
func restoreFixture(t *testing.T, dir string, m *upgradetest.Manifest) *upgradeDB {
	t.Helper()
	switch m.Store {
	case upgradetest.StoreSQLite:
		d := &upgradeDB{store: m.Store, path: filepath.Join(t.TempDir(), "hookd.db")}
		d.flag = "sqlite:" + d.path
		gunzipTo(t, filepath.Join(dir, upgradetest.SQLiteFile), d.path)
		return d
	case upgradetest.StorePostgres:
		d := &upgradeDB{store: m.Store, flag: emptyPostgresDatabase(t, "upgrade")}
		sqlText := gunzipString(t, filepath.Join(dir, upgradetest.DumpFile))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, d.flag)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		// Without arguments pgx sends the dump in the simple protocol, which runs every
		// statement of it; pg_dump's psql meta-commands (\restrict, \unrestrict) are not SQL.
		if _, err := c.Exec(ctx, withoutMetaCommands(sqlText)); err != nil {
			t.Fatalf("restore %s: %v", filepath.Join(dir, upgradetest.DumpFile), err)
		}
		return d
	}
	t.Fatalf("fixture %s: unknown store %q", dir, m.Store)
	return nil
}

// emptyPostgresDatabase creates a database of its own on HOOKD_TEST_POSTGRES_URL's server, drops
// it when the test ends, and returns its URL; it skips the test without the variable.
func emptyPostgresDatabase(t *testing.T, prefix string) string {
	t.Helper()
	base := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is not set: the PostgreSQL upgrade fixtures need a server (e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)")
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	name := fmt.Sprintf("hookd_%s_%s", prefix, hex.EncodeToString(suffix))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// withoutMetaCommands drops the lines of a dump that start with a backslash.
func withoutMetaCommands(dump string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(dump))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), `\`) {
			b.WriteString(sc.Text())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func gunzipTo(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func gunzipString(t *testing.T, from string) string {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	return string(b)
}

// open opens the database with database/sql: the SQLite driver the sqlite package registers, or
// pgx's.
func (d *upgradeDB) open(t *testing.T) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite", d.path
	if d.store == upgradetest.StorePostgres {
		driver, dsn = "pgx", d.flag
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// holdExpiries moves what a fixture's clock let expire since it was made an hour past now:
// app-portal tokens live at most seven days and payloads at most 90, so a fixture's would have
// expired in every run after that. The test is whether the binary under test still knows the
// tokens and payloads an earlier build wrote, not whether time passed. Every build stores these
// times as Unix microseconds on SQLite and as timestamptz on PostgreSQL.
func (d *upgradeDB) holdExpiries(t *testing.T) {
	t.Helper()
	db := d.open(t)
	later := time.Now().Add(time.Hour)
	stmts := []struct{ table, column string }{
		{"hookd_tokens", "expires_at"},
		{"hookd_messages", "payload_expires_at"},
	}
	for _, s := range stmts {
		if !d.hasColumn(t, db, s.table, s.column) {
			continue
		}
		q := fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s IS NOT NULL", s.table, s.column, s.column)
		var arg any = later.UnixMicro()
		if d.store == upgradetest.StorePostgres {
			q = strings.Replace(q, "?", "$1", 1)
			arg = later
		}
		if _, err := db.Exec(q, arg); err != nil {
			t.Fatalf("hold %s.%s: %v", s.table, s.column, err)
		}
	}
}

// checkAttemptsTyped checks that the server gave every attempt the earlier build recorded its
// message's event type (attempt_types.go), and that it recorded some.
func (d *upgradeDB) checkAttemptsTyped(t *testing.T) {
	t.Helper()
	db := d.open(t)
	var all, untyped int
	err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE a.event_type IS DISTINCT FROM m.event_type)
		FROM hookd_attempts a JOIN hookd_messages m ON m.id = a.message_id`).Scan(&all, &untyped)
	if err != nil {
		t.Fatal(err)
	}
	if all == 0 || untyped > 0 {
		t.Errorf("after the upgrade, %d of %d attempts lack their message's event type", untyped, all)
	}
}

func (d *upgradeDB) hasColumn(t *testing.T, db *sql.DB, table, column string) bool {
	t.Helper()
	q := `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`
	if d.store == upgradetest.StorePostgres {
		q = `SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2`
	}
	var n int
	if err := db.QueryRow(q, table, column).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// schema lists the database's tables, columns, indexes and (PostgreSQL) functions, one line each.
func (d *upgradeDB) schema(t *testing.T) map[string]bool {
	t.Helper()
	db := d.open(t)
	queries := []string{
		`SELECT 'table ' || m.name || ' column ' || p.name || ' ' || lower(p.type) || ' notnull=' || p."notnull" || ' default=' || coalesce(p.dflt_value, 'none')
		   FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`,
		`SELECT 'index ' || name || ' on ' || tbl_name || ': ' || coalesce(sql, 'automatic') FROM sqlite_master WHERE type = 'index'`,
		`SELECT 'trigger ' || name || ': ' || sql FROM sqlite_master WHERE type = 'trigger'`,
	}
	if d.store == upgradetest.StorePostgres {
		queries = []string{
			`SELECT 'table ' || table_name || ' column ' || column_name || ' ' || data_type || ' nullable=' || is_nullable || ' default=' || coalesce(column_default, 'none')
			   FROM information_schema.columns WHERE table_schema = 'public'`,
			`SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'public'`,
			`SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') returns ' || pg_get_function_result(p.oid) || ' body ' || md5(p.prosrc)
			   FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'`,
			`SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal`,
		}
	}
	out := map[string]bool{}
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("read the schema: %v\n%s", err, q)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			out[strings.Join(strings.Fields(line), " ")] = true
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// freshSchemas holds, per store, the schema the binary under test gives a new database.
var freshSchemas struct {
	mu     sync.Mutex
	byKind map[string]map[string]bool
}

// freshSchema returns the schema "hookd migrate" of the binary under test gives an empty
// database of store, made once per run.
func freshSchema(t *testing.T, bin, store string) map[string]bool {
	t.Helper()
	freshSchemas.mu.Lock()
	defer freshSchemas.mu.Unlock()
	if s, ok := freshSchemas.byKind[store]; ok {
		return s
	}
	d := &upgradeDB{store: store}
	if store == upgradetest.StoreSQLite {
		d.path = filepath.Join(t.TempDir(), "fresh.db")
		d.flag = "sqlite:" + d.path
	} else {
		d.flag = emptyPostgresDatabase(t, "fresh")
	}
	if out, err := exec.Command(bin, "migrate", "--db", d.flag).CombinedOutput(); err != nil {
		t.Fatalf("hookd migrate of an empty %s database: %v\n%s", store, err, out)
	}
	s := d.schema(t)
	if freshSchemas.byKind == nil {
		freshSchemas.byKind = map[string]map[string]bool{}
	}
	freshSchemas.byKind[store] = s
	return s
}

// missingFrom lists the lines of want that got lacks, sorted.
func missingFrom(want, got map[string]bool) []string {
	var out []string
	for line := range want {
		if !got[line] {
			out = append(out, line)
		}
	}
	sort.Strings(out)
	return out
}
