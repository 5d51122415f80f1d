package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/fsfault"
	"github.com/hookd/hookd/sqlite"
)

// The tests of this file take a store through an outage of its file (see outage). Those that need
// root to break the file for real (a full tmpfs, an immutable file) are in full_disk_linux_test.go;
// TestPageLimit runs everywhere.

// TestPageLimit caps the file at its current size (PRAGMA max_page_count on the write connection):
// SQLite then fails every write that needs a new page with SQLITE_FULL, as it does on a full disk.
// The cap lifted, writes go on without a restart.
func TestPageLimit(t *testing.T) {
	t.Parallel()
	outage(t, filepath.Join(t.TempDir(), "hookd.db"),
		func(s *sqlite.Store) error {
			// The write pool has one connection, so the setting holds for every write.
			var pages int
			if err := s.DB().QueryRowContext(t.Context(), `PRAGMA page_count`).Scan(&pages); err != nil {
				return err
			}
			_, err := s.DB().ExecContext(t.Context(), fmt.Sprintf(`PRAGMA max_page_count = %d`, pages))
			return err
		},
		func(s *sqlite.Store) error {
			_, err := s.DB().ExecContext(t.Context(), `PRAGMA max_page_count = 4294967294`)
			return err
		})
}

// outage opens a store at path, with a client and a receiver, and takes it through an outage:
// 20 sends accepted, to a receiver that takes 300 ms to answer (4 KB) so that their deliveries
// end in the outage; breakIt; for at least 1.5 s, sends until five fail, every failure wrapping
// hookd.ErrUnavailable, while reads still work and the workers' writes fail; fixIt; 20 sends
// accepted at once. Then every accepted message arrives and its delivery is recorded (the workers
// resumed without a restart), the file passes PRAGMA integrity_check, and it holds exactly the
// accepted messages, each with its delivery.
func outage(t *testing.T, path string, breakIt, fixIt func(s *sqlite.Store) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	store, err := sqlite.Open(ctx, path, &sqlite.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	recv := hookdtest.NewReceiver()
	t.Cleanup(recv.Close)
	c, err := hookd.NewClient(store, &hookd.Config{
		Logger: logger,
		Delivery: &delivery.Config{
			Timeout:      2 * time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) }) // runs before the store's Close
	if _, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Outage", UID: "outage"}); err != nil {
		t.Fatal(err)
	}
	// The receiver takes 300 ms to answer, so the deliveries of the sends before the outage end
	// during it, and its answer is long, so that recording it takes new pages: the workers'
	// writes (the attempts, the jobs' outcomes) fail too.
	answer := `{"echo":"` + strings.Repeat("y", 4000) + `"}`
	recv.Handle("/ok", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, answer)
	}))
	if _, err := c.CreateEndpoint(ctx, "outage", &hookd.EndpointIn{URL: recv.URL("/ok")}); err != nil {
		t.Fatal(err)
	}

	accepted := map[string]string{} // event id -> message id
	seq := 0
	send := func() error {
		seq++
		id := fmt.Sprintf("seq-%d", seq)
		res, err := c.Send(ctx, "outage", &hookd.MessageIn{EventType: "outage.test", EventID: id,
			Payload: map[string]any{"seq": seq, "pad": strings.Repeat("x", 2000)}})
		if err == nil {
			accepted[id] = res.Message.ID
		}
		return err
	}
	for range 20 {
		if err := send(); err != nil {
			t.Fatalf("send before the outage: %v", err)
		}
	}

	if err := breakIt(store); err != nil {
		t.Fatalf("break the file: %v", err)
	}
	failed := 0
	var firstErr error
	for began := time.Now(); failed < 5 || time.Since(began) < 1500*time.Millisecond; time.Sleep(20 * time.Millisecond) {
		if time.Since(began) > 20*time.Second {
			t.Fatalf("sends during the outage, for 20 s: %d failed; want 5", failed)
		}
		err := send()
		if err == nil {
			continue // a write that fits in pages the file already has
		}
		if !errors.Is(err, hookd.ErrUnavailable) {
			t.Fatalf("send during the outage: %v, want an error wrapping hookd.ErrUnavailable", err)
		}
		if firstErr == nil {
			firstErr = err
		}
		failed++
	}
	if _, err := c.ListMessages(ctx, "outage", hookd.MessageFilter{}); err != nil {
		t.Errorf("a read during the outage: %v", err)
	}
	workerFailures := logs.count("record attempts", "hookd job failed", "write job outcomes", "jobs failing")
	if workerFailures == 0 {
		t.Errorf("no write of the workers failed during the outage: the test did not exercise them\n%s", logs)
	}

	if err := fixIt(store); err != nil {
		t.Fatalf("fix the file: %v", err)
	}
	for range 20 {
		if err := send(); err != nil {
			t.Fatalf("send after the outage: %v", err)
		}
	}
	t.Logf("%d sends: %d accepted, %d refused while the file was broken, the first with: %v; %d failed writes of the workers",
		seq, len(accepted), failed, firstErr, workerFailures)

	// Every accepted message arrives, and every delivery is recorded as delivered, its job gone.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		arrived := map[string]bool{}
		for _, r := range recv.Requests("/ok") {
			arrived[r.WebhookID] = true
		}
		missing := 0
		for _, id := range accepted {
			if !arrived[id] {
				missing++
			}
		}
		var open, jobs int
		if err := store.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM hookd_deliveries WHERE status != 'delivered'),
			(SELECT count(*) FROM hookd_jobs)`).Scan(&open, &jobs); err != nil {
			t.Fatal(err)
		}
		if missing == 0 && open == 0 && jobs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the outage: %d of %d accepted messages never arrived; %d deliveries not recorded as delivered, %d jobs left",
				missing, len(accepted), open, jobs)
		}
	}

	// The file holds the accepted messages and no other: a refused send left nothing behind.
	ids := make([]string, 0, len(accepted))
	for id := range accepted {
		ids = append(ids, id)
	}
	fsfault.CheckHolds(t, store.DB(), ids)
}

// logBuffer is a log that tests read while the store writes it.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// count returns how many lines hold one of subs.
func (l *logBuffer) count(subs ...string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		for _, s := range subs {
			if strings.Contains(line, s) {
				n++
				break
			}
		}
	}
	return n
}
