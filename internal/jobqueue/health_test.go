package jobqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// memDriver is a jobs table in memory whose Fetch and Settle fail, or Fetch blocks, when the
// test says: the engine's side of the Driver contract is what these tests pin, and a real
// database cannot be made to fail one call at a time.
type memDriver struct {
	mu        sync.Mutex
	jobs      []Job[int]
	fetchErr  error
	settleErr error
	block     chan struct{} // non-nil: Fetch waits for it to close
	settled   int
}

func (d *memDriver) Open(context.Context) error { return nil }
func (d *memDriver) Close() error               { return nil }

func (d *memDriver) Fetch(ctx context.Context, lane hookd.Lane, limit int, horizon time.Time) ([]Job[int], error) {
	d.mu.Lock()
	block, err := d.block, d.fetchErr
	d.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Job[int]
	for len(d.jobs) > 0 && len(out) < limit && lane == hookd.LaneFirst {
		out = append(out, d.jobs[0])
		d.jobs = d.jobs[1:]
	}
	return out, nil
}

func (d *memDriver) Settle(_ context.Context, batch []Outcome[int]) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.settleErr != nil {
		return d.settleErr
	}
	d.settled += len(batch)
	return nil
}

func (d *memDriver) set(f func(d *memDriver)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

func (d *memDriver) add(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range n {
		d.jobs = append(d.jobs, Job[int]{Job: hookd.Job{DeliveryID: fmt.Sprintf("d%d", i), Attempt: 1, Trigger: hookd.TriggerScheduled}, RunAt: time.Now(), Ref: i})
	}
}

// syncBuffer is a log destination safe for the engine's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// count returns how many lines hold every one of subs.
func (s *syncBuffer) count(subs ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range strings.Split(s.b.String(), "\n") {
		all := l != ""
		for _, sub := range subs {
			all = all && strings.Contains(l, sub)
		}
		if all {
			n++
		}
	}
	return n
}

func startEngine(t *testing.T, h hookd.JobHandler, timeout time.Duration) (*Engine[int], *memDriver, *syncBuffer) {
	t.Helper()
	d, logs := &memDriver{}, &syncBuffer{}
	e := New[int](d, Config{Name: "test queue", Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Workers: map[hookd.Lane]int{hookd.LaneFirst: 2, hookd.LaneRetry: 1, hookd.LaneManual: 1}, JobTimeout: timeout})
	e.SetPoll(5 * time.Millisecond)
	if err := e.Health(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Health before Start: %v, want ErrStopped", err)
	}
	if err := e.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e, d, logs
}

// waitHealth waits up to 10 s for match to accept Health's answer.
func waitHealth(t *testing.T, e *Engine[int], what string, match func(error) bool) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := e.Health()
		if match(err) {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("Health did not come to %s within 10 s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func healthy(err error) bool { return err == nil }

// Fetches that fail make Health name them, with one log line for the hundreds of failed tries;
// once they succeed again Health is nil and the outage's end is logged.
func TestHealthFetchFails(t *testing.T) {
	t.Parallel()
	e, d, logs := startEngine(t, func(context.Context, hookd.Job) error { return nil }, time.Second)
	waitHealth(t, e, "healthy", healthy)
	down := fmt.Errorf("%w: connection refused", hookd.ErrUnavailable)
	d.set(func(d *memDriver) { d.fetchErr = down })
	err := waitHealth(t, e, "the fetch's failure", func(err error) bool { return err != nil })
	if !strings.Contains(err.Error(), "test queue: fetch jobs: database unavailable: connection refused") {
		t.Fatalf("Health while fetches fail: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // dozens of failed fetches at a poll of 5 ms
	d.set(func(d *memDriver) { d.fetchErr = nil })
	waitHealth(t, e, "healthy after the fetches recovered", healthy)
	if began, ended := logs.count("hookd outage began", "fetch jobs"), logs.count("hookd outage ended", "fetch jobs"); began != 1 || ended != 1 {
		t.Fatalf("%d lines of the outage's start and %d of its end, want 1 and 1; the log:\n%s", began, ended, logs.b.String())
	}
}

// Outcomes that cannot be written make Health name the settle; jobs failing on an unavailable
// database log one line for them all.
func TestHealthSettleAndJobsFail(t *testing.T) {
	t.Parallel()
	down := fmt.Errorf("%w: disk full", hookd.ErrUnavailable)
	e, d, logs := startEngine(t, func(context.Context, hookd.Job) error { return down }, time.Second)
	d.set(func(d *memDriver) { d.settleErr = errors.New("disk full") })
	d.add(20)
	err := waitHealth(t, e, "the settle's failure", func(err error) bool { return err != nil })
	if !strings.Contains(err.Error(), "test queue: write job outcomes: disk full") {
		t.Fatalf("Health while settles fail: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for logs.count("hookd outage began", "jobs failing, database unavailable") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	d.set(func(d *memDriver) { d.settleErr = nil })
	err = waitHealth(t, e, "the jobs' failures", func(err error) bool { return err != nil && !strings.Contains(err.Error(), "write job outcomes") })
	if !strings.Contains(err.Error(), "jobs failing, database unavailable: database unavailable: disk full") {
		t.Fatalf("Health while jobs fail on the database: %v", err)
	}
	if n := logs.count("hookd outage began", "jobs failing"); n != 1 {
		t.Fatalf("%d lines for 20 jobs failing on the database, want 1:\n%s", n, logs.b.String())
	}
	if n := logs.count("hookd job failed"); n != 0 {
		t.Fatalf("%d lines of a job failing, want none (the outage counts them):\n%s", n, logs.b.String())
	}
}

// A Fetch that does not return (a hung database) makes Health say so after FetchStall.
func TestHealthFetchHangs(t *testing.T) {
	t.Parallel()
	e, d, _ := startEngine(t, func(context.Context, hookd.Job) error { return nil }, time.Second)
	e.fetchStall = 100 * time.Millisecond
	waitHealth(t, e, "healthy", healthy)
	release := make(chan struct{})
	d.set(func(d *memDriver) { d.block = release })
	err := waitHealth(t, e, "a hung fetch", func(err error) bool { return err != nil })
	if !strings.Contains(err.Error(), "has not returned for") {
		t.Fatalf("Health with a fetch hung: %v", err)
	}
	d.set(func(d *memDriver) { d.block = nil })
	close(release)
	waitHealth(t, e, "healthy after the fetch returned", healthy)
}

// Every slot busy with jobs that outlive their timeout makes Health say the lane is stuck; a
// backlog whose jobs end is healthy however long it is.
func TestHealthSlotsStuck(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		stuck = make(chan struct{})
		hang  = false
	)
	e, d, _ := startEngine(t, func(ctx context.Context, j hookd.Job) error {
		mu.Lock()
		h := hang
		mu.Unlock()
		if h {
			<-stuck // ignores its context, as a handler with a bug would
			return nil
		}
		time.Sleep(5 * time.Millisecond)
		return nil
	}, 50*time.Millisecond)
	e.busyStall = 100 * time.Millisecond
	d.add(200) // a backlog: 2 slots, 5 ms a job, about 500 ms of work
	for range 40 {
		if err := e.Health(); err != nil {
			t.Fatalf("Health while a backlog is worked: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	hang = true
	mu.Unlock()
	d.add(10)
	err := waitHealth(t, e, "stuck slots", func(err error) bool { return err != nil })
	if !strings.Contains(err.Error(), "every slot of lane first has been busy") {
		t.Fatalf("Health with every slot stuck: %v", err)
	}
	mu.Lock()
	hang = false
	mu.Unlock()
	close(stuck)
	waitHealth(t, e, "healthy after the jobs ended", healthy)
}
