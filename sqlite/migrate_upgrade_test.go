package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/internal/migrations"
	"github.com/hookd/hookd/sqlite"
)

// legacyStep is one migration as a runner before checksums applied it: its version, and its
// text when that differs from today's file (a file that changed after it landed).
type legacyStep struct {
	version int
	text    string
}

// todays is the steps of the versions given, in that order, each with today's text.
func todays(versions ...int) []legacyStep {
	var out []legacyStep
	for _, v := range versions {
		out = append(out, legacyStep{version: v})
	}
	return out
}

// upTo is 1, 2, ..., n.
func upTo(n int) []int {
	var out []int
	for v := 1; v <= n; v++ {
		out = append(out, v)
	}
	return out
}

// oldText is a migration's text as an earlier build had it, kept in testdata under its name
// and its git blob id.
func oldText(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// knownMigrations are this build's migration files, by version.
func knownMigrations(t *testing.T) map[int]migrations.Migration {
	t.Helper()
	all, err := migrations.Load(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]migrations.Migration{}
	for _, m := range all {
		out[m.Version] = m
	}
	return out
}

// legacyFile builds, at a new path, the SQLite file that a runner before checksums left after
// applying steps in their order: each text, and a row of hookd_migrations as it wrote them
// (version, name, applied_at; no checksum).
func legacyFile(t *testing.T, steps []legacyStep) string {
	t.Helper()
	known := knownMigrations(t)
	path := filepath.Join(t.TempDir(), "hookd.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(ON)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`CREATE TABLE hookd_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		m := known[s.version]
		text := m.SQL
		if s.text != "" {
			text = s.text
		}
		if _, err := tx.Exec(text); err != nil {
			t.Fatalf("apply %s: %v", m.Name, err)
		}
		if _, err := tx.Exec(`INSERT INTO hookd_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, time.Now().UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

// schemaOf describes the schema of the file at path, to compare two files: each table's columns
// (sorted, since migrations applied in another order add them in another order) and foreign
// keys, and each index with its definition.
func schemaOf(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	add := func(query string, args ...any) {
		rows, err := db.Query(query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.TrimSpace(fmt.Sprintln(append(args, vals...)...)))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, table := range tables {
		add(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`, table)
		add(`SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"`, table)
	}
	add(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type <> 'table' AND sql IS NOT NULL ORDER BY name`)
	return out
}

// freshSchema is the schema Open gives a new file.
func freshSchema(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fresh.db")
	if err := open(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	return schemaOf(t, path)
}

// checkDelivers sends a message with tags through a client on s and waits until a receiver
// has it, then reads the message back with its tags.
func checkDelivers(t *testing.T, s hookd.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	recv := hookdtest.NewReceiver()
	defer recv.Close()
	c, err := hookd.NewClient(s, &hookd.Config{
		Logger:   logcheck.New(t).Logger(),
		Delivery: &delivery.Config{Timeout: 2 * time.Second, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(context.Background()) }()
	if _, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: recv.URL("/hooks")}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Tags: []string{"billing"}, Payload: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if _, err := recv.Wait(ctx, "/hooks", 1); err != nil {
		t.Fatalf("the message was not delivered: %v", err)
	}
	got, err := c.GetMessage(ctx, "acme", res.Message.ID)
	if err != nil || !slices.Equal(got.Tags, []string{"billing"}) {
		t.Fatalf("GetMessage: %+v, %v; want the tags sent", got, err)
	}
}

// TestUpgradeFromEarlierBuilds: a file that runners before checksums migrated, with migrations
// applied out of their order or from a text that changed after it landed, is brought to the
// schema of a new file, and delivers.
func TestUpgradeFromEarlierBuilds(t *testing.T) {
	t.Parallel()
	want := freshSchema(t)
	for _, tc := range []struct {
		name  string
		steps func(t *testing.T) []legacyStep
	}{
		// Migration 6 (message tags) landed after 7, at eedb5e1.
		{"made at db8f5f0, without 6", func(*testing.T) []legacyStep { return todays(1, 2, 3, 4, 5, 7) }},
		{"made at db8f5f0, then migrated above the highest", func(*testing.T) []legacyStep {
			return todays(1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15)
		}},
		// Migration 8 (sessions) landed after 9, at 4b0ad10.
		{"made at 8601f23, without 8", func(*testing.T) []legacyStep { return todays(1, 2, 3, 4, 5, 6, 7, 9) }},
		// Migration 15 gained two indexes at 61d7541.
		{"made at 4548fc5, 15 of blob 0f9b6dd", func(t *testing.T) []legacyStep {
			return append(todays(upTo(14)...), legacyStep{15, oldText(t, "0015_delivery_jobs.0f9b6dd.sql")})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps := tc.steps(t)
			path := legacyFile(t, steps)
			s := open(t, path)
			checkDelivers(t, s)

			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := schemaOf(t, path); !slices.Equal(got, want) {
				t.Errorf("schema after the upgrade differs from a new file's:\n%s", diffLines(got, want))
			}
			checkRecorded(t, path, steps)
			// Opened again, there is nothing left to do.
			again, err := sqlite.Open(t.Context(), path, nil)
			if err != nil {
				t.Fatalf("second Open: %v", err)
			}
			if err := again.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkRecorded checks that the file at path records every migration of this build once, with
// its checksum, except those of steps, which an earlier runner applied: they keep none.
func checkRecorded(t *testing.T, path string, steps []legacyStep) {
	t.Helper()
	legacy := map[int]bool{}
	for _, st := range steps {
		legacy[st.version] = true
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT version, name, checksum FROM hookd_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	known := knownMigrations(t)
	n := 0
	for rows.Next() {
		var v int
		var name, sum string
		if err := rows.Scan(&v, &name, &sum); err != nil {
			t.Fatal(err)
		}
		n++
		wantSum := fmt.Sprintf("%x", sha256.Sum256([]byte(known[v].SQL)))
		if legacy[v] {
			wantSum = ""
		}
		if name != known[v].Name || sum != wantSum {
			t.Errorf("hookd_migrations row %d: %s %q, want %s %q", v, name, sum, known[v].Name, wantSum)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(known) {
		t.Errorf("hookd_migrations has %d rows, want %d", n, len(known))
	}
}

// diffLines lists the lines only in got (-) and only in want (+).
func diffLines(got, want []string) string {
	var out string
	for _, l := range got {
		if !slices.Contains(want, l) {
			out += "- " + l + "\n"
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			out += "+ " + l + "\n"
		}
	}
	return out
}
