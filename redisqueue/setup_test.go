package redisqueue_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
	"github.com/redis/go-redis/v9"
)

// redisURL returns HOOKD_TEST_REDIS_URL, or skips the test when it is unset.
func redisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("HOOKD_TEST_REDIS_URL")
	if u == "" {
		t.Skip("HOOKD_TEST_REDIS_URL is not set; set it to a Redis URL (e.g. redis://127.0.0.1:6379/0) to run the Redis queue's tests")
	}
	return u
}

// withDB returns the Redis URL u with database db.
func withDB(t testing.TB, u string, db int) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse HOOKD_TEST_REDIS_URL: %v", err)
	}
	p.Path = "/" + strconv.Itoa(db)
	q := p.Query()
	q.Del("db")
	p.RawQuery = q.Encode()
	return p.String()
}

// newNamespace returns a namespace of the test's own: its name, made valid, and a random suffix.
func newNamespace(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 48 {
		name = name[len(name)-48:]
	}
	return fmt.Sprintf("t.%s.%08x", name, rand.Uint32())
}

// redisClient returns a client of the Redis at u, closed when the test ends.
func redisClient(t testing.TB, u string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatalf("parse Redis URL: %v", err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// deleteNamespace deletes the keys of namespace ns's queues and slot leases from the Redis at u.
func deleteNamespace(t testing.TB, u, ns string) {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Errorf("parse Redis URL: %v", err)
		return
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var keys []string
	for _, pattern := range []string{"asynq:{" + ns + ":*", "hookd:{" + ns + "}:*"} { // asynq's, and the slot leases'
		iter := c.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("scan namespace %s: %v", ns, err)
			return
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Errorf("delete namespace %s: %v", ns, err)
			return
		}
		keys = keys[n:]
	}
	for _, l := range []hookd.Lane{hookd.LaneFirst, hookd.LaneRetry, hookd.LaneManual} {
		c.SRem(ctx, "asynq:queues", redisqueue.QueueName(ns, l))
	}
}

// openStore opens a SQLite store on a file in the test's temporary directory, closed when the
// test ends (after the queues built on it).
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newQueue builds a queue on the Redis at u for store, in a namespace of the test's own unless
// cfg names one. When the test ends the queue is closed and its namespace's keys deleted.
func newQueue(t testing.TB, u string, store hookd.Store, qcfg *hookd.QueueConfig, cfg *redisqueue.Config) *redisqueue.Queue {
	t.Helper()
	c := redisqueue.Config{}
	if cfg != nil {
		c = *cfg
	}
	if c.Namespace == "" {
		c.Namespace = newNamespace(t)
	}
	if c.Logger == nil {
		c.Logger = testLogger(t)
	}
	q, err := redisqueue.New(u, store, qcfg, &c)
	if err != nil {
		t.Fatalf("redisqueue.New: %v", err)
	}
	t.Cleanup(func() { deleteNamespace(t, u, c.Namespace) })
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

// testLogger shows warnings and errors in the test's output, and records every line, Debug
// included, to be checked for secrets when the test ends (call it before what it logs for starts).
func testLogger(t testing.TB) *slog.Logger {
	return logcheck.New(t).LoggerTo(t.Output(), slog.LevelWarn)
}

// start starts q with h; the test's cleanup closes it.
func start(t testing.TB, q *redisqueue.Queue, h hookd.JobHandler) {
	t.Helper()
	if err := q.Start(context.Background(), h); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// enqueue enqueues jobs in a committed transaction of store.
func enqueue(t testing.TB, store hookd.Store, q hookd.Queue, jobs ...hookd.Job) {
	t.Helper()
	err := store.InTx(context.Background(), func(tx hookd.Tx) error {
		return q.EnqueueTx(context.Background(), tx, jobs)
	})
	if err != nil {
		t.Fatalf("enqueue %d jobs: %v", len(jobs), err)
	}
}

// perDelivery counts calls by delivery id.
func perDelivery(calls []queuetest.Call) map[string]int {
	n := make(map[string]int, len(calls))
	for _, c := range calls {
		n[c.Job.DeliveryID]++
	}
	return n
}

// settle is how long a test watches for calls that must not come.
const settle = 500 * time.Millisecond
