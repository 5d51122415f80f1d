package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd/postgres"
)

// lockedBuffer is a log's destination that the test reads while the store may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAutovacuumWarning: Open logs one warning when the server's autovacuum is off (as the
// server's own setting says) and none when it is on; a hot table whose autovacuum_enabled is
// false is named in the warning, at Open and when read again, and is no longer once reset.
// Migration 19 gives the queue's tables settings of their own.
func TestAutovacuumWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := testURL(t)
	schema := freshSchema(t, u)
	open := func() (*postgres.Store, string) {
		t.Helper()
		var buf lockedBuffer
		s, err := postgres.Open(ctx, u, &postgres.Config{Schema: schema, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, buf.String()
	}
	s, log := open()
	var server string
	if err := s.Pool().QueryRow(ctx, `SHOW autovacuum`).Scan(&server); err != nil {
		t.Fatal(err)
	}
	warnings := strings.Count(log, "level=WARN")
	if server == "off" {
		if warnings != 1 || !strings.Contains(log, "the server's autovacuum is off") || !strings.Contains(log, "docs/install.md") {
			t.Fatalf("autovacuum off on the server; Open logged:\n%s", log)
		}
	} else if warnings != 0 {
		t.Fatalf("autovacuum on the server; Open logged:\n%s", log)
	}

	var opts []string
	if err := s.Pool().QueryRow(ctx, `SELECT reloptions FROM pg_class WHERE oid = 'hookd_jobs'::regclass`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(opts, ","), "autovacuum_vacuum_threshold=1000") {
		t.Fatalf("hookd_jobs options %v, want migration 19's", opts)
	}

	table := pgx.Identifier{schema, "hookd_jobs"}.Sanitize()
	if _, err := s.Pool().Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	const named = "autovacuum_enabled is false on hookd_jobs"
	if w, err := postgres.AutovacuumWarning(ctx, s); err != nil || !strings.Contains(w, named) {
		t.Fatalf("warning %q, %v; want it to name hookd_jobs", w, err)
	}
	if _, log := open(); strings.Count(log, "level=WARN") != 1 || !strings.Contains(log, named) {
		t.Fatalf("Open with hookd_jobs' autovacuum disabled logged:\n%s", log)
	}
	if _, err := s.Pool().Exec(ctx, `ALTER TABLE `+table+` RESET (autovacuum_enabled)`); err != nil {
		t.Fatal(err)
	}
	if w, err := postgres.AutovacuumWarning(ctx, s); err != nil || strings.Contains(w, named) {
		t.Fatalf("warning %q, %v after the reset; want hookd_jobs not named", w, err)
	}
}
