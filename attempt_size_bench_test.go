package hookd_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// BenchmarkAttemptBytes fills a store through Client.Send with HOOKD_SIZE_MESSAGES messages
// (default 10,000) of a 250-byte payload, each to 3 endpoints of a receiver on 127.0.0.1 (one
// endpoint with a header of its own; the signature under both header sets, the default), waits
// until every delivery's attempt is recorded, and reports what the attempts take on disk:
//
//   - attempt-B/row: the attempts table (SQLite: its b-tree, from dbstat; PostgreSQL: heap,
//     TOAST and free space map), per attempt; attempt-idx-B/row: its indexes;
//   - req-headers-B/row and resp-headers-B/row: the stored text of the headers (SQLite: bytes;
//     PostgreSQL: pg_column_size, after compression);
//   - db-B/message: the whole database (SQLite: the file after a checkpoint; PostgreSQL: every
//     relation of the schema) per message;
//   - PostgreSQL, with HOOKD_WALINSPECT_URL (a database of the same server with the pg_walinspect
//     extension): attempt-wal-B/row and attempt-idx-wal-B/row, the WAL records of the fill that
//     touch the attempts table and its indexes (full-page images included), per attempt.
//
// The receiver shares the process. One iteration is the whole fill: run it with -benchtime 1x.
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run '^$' -bench AttemptBytes -benchtime 1x .
func BenchmarkAttemptBytes(b *testing.B) {
	n := 10_000
	if s := os.Getenv("HOOKD_SIZE_MESSAGES"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
			b.Fatalf("HOOKD_SIZE_MESSAGES=%q: want a positive number", s)
		}
	}
	b.Run("sqlite", func(b *testing.B) {
		ctx := context.Background()
		path := filepath.Join(b.TempDir(), "rows.db")
		store, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		fillForSize(b, store, n)
		db := store.DB()
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			b.Fatal(err)
		}
		var rows, table, idx, req, resp float64
		if err := db.QueryRowContext(ctx, `SELECT count(*), avg(length(CAST(request_headers AS BLOB))),
			avg(length(CAST(response_headers AS BLOB))) FROM hookd_attempts`).Scan(&rows, &req, &resp); err != nil {
			b.Fatal(err)
		}
		err = db.QueryRowContext(ctx, `SELECT coalesce(sum(CASE WHEN name = 'hookd_attempts' THEN pgsize END), 0),
			coalesce(sum(CASE WHEN name <> 'hookd_attempts' THEN pgsize END), 0)
			FROM dbstat WHERE name = 'hookd_attempts' OR name IN
			(SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'hookd_attempts')`).Scan(&table, &idx)
		if err != nil {
			b.Fatalf("dbstat: %v", err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(table/rows, "attempt-B/row")
		b.ReportMetric(idx/rows, "attempt-idx-B/row")
		b.ReportMetric(req, "req-headers-B/row")
		b.ReportMetric(resp, "resp-headers-B/row")
		b.ReportMetric(float64(fi.Size())/float64(n), "db-B/message")
	})
	b.Run("postgres", func(b *testing.B) {
		u := os.Getenv("HOOKD_TEST_POSTGRES_URL")
		if u == "" {
			b.Skip("HOOKD_TEST_POSTGRES_URL is unset")
		}
		ctx := context.Background()
		schema := testSchema(b, u)
		store, err := postgres.Open(ctx, u, &postgres.Config{Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		pool := store.Pool()
		var lsn0, lsn1 string
		if err := pool.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&lsn0); err != nil {
			b.Fatal(err)
		}
		fillForSize(b, store, n)
		if err := pool.QueryRow(ctx, `SELECT pg_current_wal_flush_lsn()::text`).Scan(&lsn1); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+pgx.Identifier{schema, "hookd_attempts"}.Sanitize()); err != nil {
			b.Fatal(err)
		}
		var rows, table, idx, req, resp, all float64
		rel := pgx.Identifier{schema, "hookd_attempts"}.Sanitize()
		if err := pool.QueryRow(ctx, `SELECT count(*), avg(pg_column_size(request_headers)),
			avg(pg_column_size(response_headers)) FROM `+rel).Scan(&rows, &req, &resp); err != nil {
			b.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass),
			(SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
			 WHERE s.nspname = $2 AND c.relkind IN ('r', 'm'))`, rel, schema).Scan(&table, &idx, &all); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(table/rows, "attempt-B/row")
		b.ReportMetric(idx/rows, "attempt-idx-B/row")
		b.ReportMetric(req, "req-headers-B/row")
		b.ReportMetric(resp, "resp-headers-B/row")
		b.ReportMetric(all/float64(n), "db-B/message")
		if w := os.Getenv("HOOKD_WALINSPECT_URL"); w != "" {
			heapWAL, idxWAL := attemptsWAL(b, pool, w, schema, lsn0, lsn1)
			b.ReportMetric(heapWAL/rows, "attempt-wal-B/row")
			b.ReportMetric(idxWAL/rows, "attempt-idx-wal-B/row")
		}
	})
}

// fillForSize sends n messages to 3 endpoints through a started client on store and waits until
// each delivery's attempt is recorded.
func fillForSize(b *testing.B, store hookd.Store, n int) {
	ctx := context.Background()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var id [16]byte
		_, _ = rand.Read(id[:])
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", hex.EncodeToString(id[:]))
		w.Write([]byte(`{"received":true}`))
	}))
	defer recv.Close()
	cfg := testConfig()
	cfg.Delivery.Timeout = 10 * time.Second
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		b.Fatal(err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	var eps []string
	for i := range 3 {
		in := &hookd.EndpointIn{URL: fmt.Sprintf("%s/hook/%d", recv.URL, i)}
		if i == 0 {
			in.Headers = map[string]string{"Authorization": "Bearer 0123456789abcdef"}
		}
		ep, err := c.CreateEndpoint(ctx, app.ID, in)
		if err != nil {
			b.Fatal(err)
		}
		eps = append(eps, ep.ID)
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		c.Stop(stop)
	}()
	payload := `{"type":"invoice.paid","data":{"id":"in_%08d","customer":"cus_4f9a2c","amount":12900,` +
		`"currency":"eur","lines":[{"sku":"plan-pro","qty":1,"unit":12900}],"status":"paid",` +
		`"period":{"start":"2026-11-01","end":"2026-11-30"},"note":"` + strings.Repeat("x", 40) + `"}}`
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				in := &hookd.MessageIn{EventType: "invoice.paid", Payload: []byte(fmt.Sprintf(payload, i))}
				if _, err := c.Send(ctx, "acme", in); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		delivered := 0
		for _, ep := range eps {
			st, err := store.EndpointStats(ctx, ep, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			delivered += st.Success
		}
		if delivered >= 3*n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d deliveries made after 10 minutes", delivered, 3*n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// attemptsWAL sums the WAL records between lsn0 and lsn1 that touch schema's attempts table
// (heap) and its indexes (idx), read through pg_walinspect in the database at walURL.
func attemptsWAL(b *testing.B, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, walURL, schema, lsn0, lsn1 string) (heap, idx float64) {
	ctx := context.Background()
	var db, table string
	var indexes []string
	rel := pgx.Identifier{schema, "hookd_attempts"}.Sanitize()
	if err := pool.QueryRow(ctx, `SELECT (SELECT oid FROM pg_database WHERE datname = current_database())::text,
		pg_relation_filenode($1::regclass)::text,
		array(SELECT pg_relation_filenode(indexrelid)::text FROM pg_index WHERE indrelid = $1::regclass)`, rel).Scan(&db, &table, &indexes); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, walURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	ref := func(node string) string { return "%/" + db + "/" + node + " %" }
	var idxRefs []string
	for _, n := range indexes {
		idxRefs = append(idxRefs, ref(n))
	}
	err = conn.QueryRow(ctx, `SELECT coalesce(sum(record_length) FILTER (WHERE block_ref LIKE $3), 0),
		coalesce(sum(record_length) FILTER (WHERE block_ref LIKE ANY ($4::text[])), 0)
		FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)`, lsn0, lsn1, ref(table), idxRefs).Scan(&heap, &idx)
	if err != nil {
		b.Fatal(err)
	}
	return heap, idx
}
