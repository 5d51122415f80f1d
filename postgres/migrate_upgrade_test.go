package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/migrations"
	"github.com/hookd/hookd/internal/slottest"
	"github.com/hookd/hookd/postgres"
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

// legacySchema builds, in a new schema, what a runner before checksums left after applying steps
// in their order: each text, and a row of hookd_migrations as it wrote them (version, name,
// applied_at; no checksum). It returns the schema's name.
func legacySchema(t *testing.T, u string, steps []legacyStep) string {
	t.Helper()
	known := knownMigrations(t)
	schema := freshSchema(t, u)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, inSchema(t, u, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()+`;
		CREATE TABLE hookd_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		m := known[s.version]
		text := m.SQL
		if s.text != "" {
			text = s.text
		}
		if _, err := tx.Exec(ctx, text); err != nil {
			t.Fatalf("apply %s: %v", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO hookd_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return schema
}

// schemaOf describes hookd's schema in schema, to compare two: each table's columns (sorted,
// since migrations applied in another order add them in another order), indexes, constraints,
// and functions with their arguments, results and bodies.
func schemaOf(t *testing.T, u, schema string) []string {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var out []string
	for _, q := range []string{
		`SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, ''), is_identity, coalesce(collation_name, '')
			FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2`,
		`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 2`,
		`SELECT c.relname, con.conname, pg_get_constraintdef(con.oid) FROM pg_constraint con
			JOIN pg_class c ON c.oid = con.conrelid WHERE c.relnamespace = $1::regnamespace ORDER BY 1, 2`,
		`SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_function_result(p.oid), p.prosrc
			FROM pg_proc p WHERE p.pronamespace = $1::regnamespace ORDER BY 1, 2`,
	} {
		rows, err := conn.Query(ctx, q, schema)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSpace(fmt.Sprintln(vals...))
			out = append(out, strings.ReplaceAll(line, schema+".", "S."))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
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
		Logger:   testLogger(t),
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

// TestUpgradeFromEarlierBuilds: a schema that runners before checksums migrated, with migrations
// applied out of their order or from a text that changed after it landed, is brought to the
// schema of a new one by processes that open it at once, each migration applied once, and
// delivers.
func TestUpgradeFromEarlierBuilds(t *testing.T) {
	t.Parallel()
	u := testURL(t)
	want := schemaOf(t, u, setup(t).schema)
	for _, tc := range []struct {
		name  string
		steps func(t *testing.T) []legacyStep
		slots bool // run the slot leaser's checks too
	}{
		// Migration 4 (message tags) landed after 5, at eedb5e1.
		{"made at db8f5f0, without 4", func(*testing.T) []legacyStep { return todays(1, 2, 3, 5) }, false},
		{"made at db8f5f0, then migrated above the highest", func(*testing.T) []legacyStep {
			return todays(1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
		}, false},
		// Migration 6 (sessions) landed after 7, at 4b0ad10.
		{"made at 8601f23, without 6", func(*testing.T) []legacyStep { return todays(1, 2, 3, 4, 5, 7) }, false},
		// Migration 12 changed its function and check at ebdaf3e.
		{"made at a5da793, 12 of blob e5504ec", func(t *testing.T) []legacyStep {
			return append(todays(upTo(11)...), legacyStep{12, oldText(t, "0012_endpoint_slots.e5504ec.sql")})
		}, true},
		{"made at c45338a, then migrated above the highest", func(t *testing.T) []legacyStep {
			return append(append(todays(upTo(11)...), legacyStep{12, oldText(t, "0012_endpoint_slots.e5504ec.sql")}), todays(13, 14, 15)...)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps := tc.steps(t)
			schema := legacySchema(t, u, steps)
			logs := &countingHandler{counts: map[string]int{}}
			logger := slog.New(slog.NewMultiHandler(logs, testLogger(t).Handler()))
			const n = 3
			stores := make([]*postgres.Store, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					stores[i], errs[i] = postgres.Open(t.Context(), u, &postgres.Config{Schema: schema, Logger: logger})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("Open %d: %v", i, err)
				}
				t.Cleanup(func() { _ = stores[i].Close() })
			}
			if got, want := logs.count("hookd migration applied"), len(knownMigrations(t))-len(steps); got != want {
				t.Errorf("%d migrations applied, want %d (once each)", got, want)
			}
			checkDelivers(t, stores[0])
			if tc.slots {
				slottest.Run(t, stores[1])
			}
			if got := schemaOf(t, u, schema); !slices.Equal(got, want) {
				t.Errorf("schema after the upgrade differs from a new one's:\n%s", diffLines(got, want))
			}
			checkRecorded(t, stores[0], steps)
		})
	}
}

// checkRecorded checks that s records every migration of this build once, with its checksum,
// except those of steps, which an earlier runner applied: they keep none.
func checkRecorded(t *testing.T, s *postgres.Store, steps []legacyStep) {
	t.Helper()
	legacy := map[int]bool{}
	for _, st := range steps {
		legacy[st.version] = true
	}
	rows, err := s.Pool().Query(t.Context(), `SELECT version, name, checksum FROM hookd_migrations ORDER BY version`)
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
