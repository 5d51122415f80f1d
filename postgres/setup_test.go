package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/postgres"
)

// testURL returns HOOKD_TEST_POSTGRES_URL, or skips the test when it is unset.
func testURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_POSTGRES_URL is unset: set it to a PostgreSQL database's URL, e.g. " +
			"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable, to run the PostgreSQL tests")
	}
	return u
}

// bundle is what setup gives a test: a store in a schema of its own, and where it lives.
type bundle struct {
	store  *postgres.Store
	url    string
	schema string
}

// setup opens a store in a fresh schema, closed and dropped when the test ends.
func setup(t testing.TB) *bundle {
	t.Helper()
	u := testURL(t)
	schema := freshSchema(t, u)
	s, err := postgres.Open(context.Background(), u, &postgres.Config{Schema: schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &bundle{store: s, url: u, schema: schema}
}

// freshSchema returns the name of a schema that does not exist yet; the schema, and everything
// in it, is dropped when the test ends (after the cleanups registered later, such as a store's
// Close).
func freshSchema(t testing.TB, u string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "hookd_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// inSchema returns u with search_path set to schema, for connections of the test's own.
func inSchema(t testing.TB, u, schema string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatalf("HOOKD_TEST_POSTGRES_URL: %v", err)
	}
	q := parsed.Query()
	q.Set("search_path", schema)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

// testLogger shows warnings and errors in the test's output, and records every line, Debug
// included, to be checked for secrets when the test ends (call it before what it logs for starts).
func testLogger(t testing.TB) *slog.Logger {
	return logcheck.New(t).LoggerTo(t.Output(), slog.LevelWarn)
}
