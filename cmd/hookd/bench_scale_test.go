package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/bench"
)

// "hookd bench fill" fills a database of the shape through the send path, with creation
// times and ids spread over the days asked, continues a fill that stopped, and "hookd bench
// scale" makes every one of its requests on a full and a small server, answered as expected.
// Both stores; small numbers, nothing timed.
func TestBenchFillAndScale(t *testing.T) {
	t.Parallel()
	bin := buildHookd(t)
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		checkFillAndScale(t, bin, []string{"--db", "sqlite:" + filepath.Join(dir, "full.db")},
			[]string{"--base-db", "sqlite:" + filepath.Join(dir, "small.db")},
			func() (*sql.DB, error) { return sql.Open("sqlite", "file:"+filepath.Join(dir, "full.db")+"?mode=ro") })
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dbURL := os.Getenv("HOOKD_TEST_POSTGRES_URL")
		if dbURL == "" {
			t.Skip("HOOKD_TEST_POSTGRES_URL is not set (postgres://USER@HOST:PORT/DATABASE?sslmode=disable)")
		}
		var b [4]byte
		rand.Read(b[:])
		full, small := "scale_test_"+hex.EncodeToString(b[:]), "scale_test_small_"+hex.EncodeToString(b[:])
		t.Cleanup(func() {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close(ctx)
			for _, s := range []string{full, small} {
				if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+s+" CASCADE"); err != nil {
					t.Error(err)
				}
			}
		})
		u, _ := url.Parse(dbURL)
		q := u.Query()
		q.Set("search_path", full)
		u.RawQuery = q.Encode()
		checkFillAndScale(t, bin, []string{"--db", dbURL, "--schema", full},
			[]string{"--base-db", dbURL, "--base-schema", small},
			func() (*sql.DB, error) { return sql.Open("pgx", u.String()) })
	})
}

func checkFillAndScale(t *testing.T, bin string, db, base []string, open func() (*sql.DB, error)) {
	const n, days = 300, 30
	began := time.Now()
	r := run(t, "", append([]string{"bench", "fill", "--messages", "280", "--days", "30", "--seed", "7", "--producers", "4", "--json"}, db...)...)
	if r.code != exitOK {
		t.Fatalf("fill: exit %d\n%s", r.code, r.stderr)
	}
	// A second fill continues the first to n messages.
	r = run(t, "", append([]string{"bench", "fill", "--messages", "300", "--producers", "4", "--json"}, db...)...)
	if r.code != exitOK {
		t.Fatalf("fill again: exit %d\n%s", r.code, r.stderr)
	}
	var rep bench.FillReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("fill's report %q: %v", r.stdout, err)
	}
	c := rep.Counts
	if !rep.Resumed || rep.Existing != 280 || rep.Sent != n-280 || rep.Seed != 7 || rep.Days != days {
		t.Errorf("second fill: resumed %v, existing %d, sent %d, seed %d, days %d; want a continued fill of 280 with 20 more, seed 7, 30 days",
			rep.Resumed, rep.Existing, rep.Sent, rep.Seed, rep.Days)
	}
	if c.Messages != n || c.Applications != 100 || c.Endpoints != 345 {
		t.Errorf("counts %+v: want %d messages, 100 applications, 345 endpoints", c, n)
	}
	perMsg := float64(c.Deliveries) / float64(c.Messages)
	if perMsg < 2.5 || perMsg > 3.6 {
		t.Errorf("%.2f deliveries per message, want about 3", perMsg)
	}
	if c.PendingDeliveries != 0 || c.Attempts < c.Deliveries || c.FailedAttempts == 0 {
		t.Errorf("counts %+v: want every delivery settled, retries and failed attempts", c)
	}
	share := func(what string, k int64, lo, hi float64) {
		if f := float64(k) / float64(c.Messages); f < lo || f > hi {
			t.Errorf("%s: %.2f of the messages, want %.2f to %.2f", what, f, lo, hi)
		}
	}
	share("on channels", c.OnChannels, 0.2, 0.4)
	share("tagged", c.Tagged, 0.15, 0.35)
	share("largest application", c.LargestApp, 0.08, 0.25)
	// Message n of N is made at start + days×n/N, n being the last number handed to a producer:
	// with 4 producers, the first message made may be the 4th handed out.
	wantFirst := began.Add(-days * 24 * time.Hour)
	step := days * 24 * time.Hour / 280
	if c.First.Before(wantFirst.Add(-time.Minute)) || c.First.After(wantFirst.Add(4*step)) ||
		c.Last.Sub(c.First) < (days-2)*24*time.Hour || c.Last.After(time.Now()) {
		t.Errorf("messages created from %s to %s: want %d days ending when the fill began (%s)", c.First, c.Last, days, began)
	}
	if rep.Size.Total <= 0 || rep.BytesPerMessage <= 0 || rep.MessagesPerSec <= 0 {
		t.Errorf("size %+v, %.0f bytes per message, %.1f messages/s: want them measured", rep.Size, rep.BytesPerMessage, rep.MessagesPerSec)
	}

	// The messages' ids sort by their creation times and encode them.
	sdb, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	rows, err := sdb.Query("SELECT id, created_at FROM hookd_messages ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var prev time.Time
	seen := 0
	for rows.Next() {
		var id string
		var at any
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		var created time.Time
		switch v := at.(type) {
		case int64:
			created = time.UnixMicro(v)
		case time.Time:
			created = v
		default:
			t.Fatalf("created_at %T", at)
		}
		body := strings.TrimPrefix(id, "msg_")
		lo := strings.TrimPrefix(hookd.AttemptIDFloor(created.Truncate(time.Millisecond)), "atmpt_")
		hi := strings.TrimPrefix(hookd.AttemptIDFloor(created.Truncate(time.Millisecond).Add(time.Millisecond)), "atmpt_")
		if body < lo || body >= hi {
			t.Errorf("message %s created at %s: its id encodes another time", id, created)
		}
		if created.Before(prev.Add(-time.Hour)) {
			t.Errorf("message %s created at %s sorts after one created at %s", id, created, prev)
		}
		prev = created
		seen++
	}
	if err := rows.Err(); err != nil || seen != n {
		t.Fatalf("read %d messages (%v), want %d", seen, err, n)
	}

	r = run(t, "", append(append([]string{"bench", "scale", "--hookd-binary", bin, "--base-messages", "120", "--rounds", "1", "--json"}, db...), base...)...)
	if r.code != exitOK {
		t.Fatalf("scale: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var sr bench.ScaleReport
	if err := json.Unmarshal([]byte(r.stdout), &sr); err != nil {
		t.Fatalf("scale's report %q: %v", r.stdout, err)
	}
	if len(sr.Problems) > 0 || len(sr.Requests) < 40 {
		t.Fatalf("scale: %d requests, problems %q", len(sr.Requests), sr.Problems)
	}
	if sr.Full.Counts.Messages != n || sr.Base.Counts.Messages != 120 {
		t.Errorf("scale measured %d and %d messages, want %d and 120", sr.Full.Counts.Messages, sr.Base.Counts.Messages, n)
	}
	kinds := map[string]bool{}
	for _, q := range sr.Requests {
		if q.Full.P50 <= 0 || q.Base.P50 <= 0 {
			t.Errorf("%s (%s): not timed on both servers: %+v", q.Name, q.Path, q)
		}
		kinds[strings.Fields(q.Name)[0]] = true
	}
	if !kinds["API"] || !kinds["dashboard"] || !kinds["portal"] {
		t.Errorf("requests of %v: want the API, the dashboard and the portal", kinds)
	}
}
