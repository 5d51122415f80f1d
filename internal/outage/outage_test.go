package outage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// lines is a slog handler that keeps each record as "LEVEL msg key=value ...", in order.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (h *lines) Enabled(context.Context, slog.Level) bool { return true }
func (h *lines) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lines) WithGroup(string) slog.Handler            { return h }

func (h *lines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	h.got = append(h.got, b.String())
	h.mu.Unlock()
	return nil
}

func (h *lines) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.got
	h.got = nil
	return out
}

func setup() (*Log, *clock, *lines) {
	clk, h := newClock(), &lines{}
	return New(slog.New(h), &Config{Now: clk.Now}), clk, h
}

func wantLines(t *testing.T, h *lines, when string, want ...string) {
	t.Helper()
	got := h.take()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: lines\n%s\nwant\n%s", when, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A 65 s outage of a loop that retries every 100 ms logs one line when it begins, a summary at
// 30 s and at 60 s with the failures since the line before, and one line when it ends: 4 lines
// for 650 failures.
func TestOutageLines(t *testing.T) {
	t.Parallel()
	log, clk, h := setup()
	c := log.Cause("queue: fetch jobs")
	c.OK() // no outage: nothing
	down := errors.New("database unavailable: connection refused")
	c.Fail(down, slog.String("lane", "first"))
	wantLines(t, h, "the first failure",
		`WARN hookd outage began cause=queue: fetch jobs error=database unavailable: connection refused lane=first`)
	for i := 1; i < 650; i++ {
		clk.advance(100 * time.Millisecond)
		err := down
		if i == 649 {
			err = errors.New("the database system is starting up")
		}
		c.Fail(err)
		switch i {
		case 300:
			wantLines(t, h, "30 s in", `WARN hookd outage continues cause=queue: fetch jobs failures=300 total=301 lasting=30s error=database unavailable: connection refused`)
		case 600:
			wantLines(t, h, "60 s in", `WARN hookd outage continues cause=queue: fetch jobs failures=300 total=601 lasting=1m0s error=database unavailable: connection refused`)
		default:
			wantLines(t, h, fmt.Sprintf("failure %d", i))
		}
	}
	s, ok := c.State()
	if !ok || s.Failures != 650 || s.Err != "the database system is starting up" || s.Last.Sub(s.Since) != 64900*time.Millisecond {
		t.Fatalf("state during the outage: %+v %v", s, ok)
	}
	// Successes within Quiet of the last failure leave the outage on.
	clk.advance(time.Second)
	c.OK()
	wantLines(t, h, "a success 1 s after the last failure")
	if _, ok := c.State(); !ok {
		t.Fatal("the outage ended 1 s after its last failure")
	}
	clk.advance(time.Second)
	c.OK()
	wantLines(t, h, "a success 2 s after the last failure",
		`INFO hookd outage ended cause=queue: fetch jobs failures=650 lasted=1m5.9s`)
	if s, ok := c.State(); ok {
		t.Fatalf("state after the outage: %+v", s)
	}
	c.OK()
	wantLines(t, h, "a success after the outage")

	// The next failure begins a new outage, counted afresh.
	clk.advance(time.Minute)
	c.Fail(down)
	clk.advance(31 * time.Second)
	c.Fail(down)
	wantLines(t, h, "a second outage",
		`WARN hookd outage began cause=queue: fetch jobs error=database unavailable: connection refused`,
		`WARN hookd outage continues cause=queue: fetch jobs failures=1 total=2 lasting=31s error=database unavailable: connection refused`)
}

// A cause that fails and succeeds by turns, as a loop does while its database comes and goes,
// logs one line when it begins and one when it has succeeded Quiet on end, not a line a turn.
func TestOutageFlapping(t *testing.T) {
	t.Parallel()
	log, clk, h := setup()
	c := log.Cause("record attempts")
	for range 20 { // 10 s of a failure then a success every 500 ms
		c.Fail(errors.New("disk I/O error"))
		clk.advance(250 * time.Millisecond)
		c.OK()
		clk.advance(250 * time.Millisecond)
	}
	clk.advance(1750 * time.Millisecond)
	c.OK()
	wantLines(t, h, "10 s of failures and successes by turns, then 2 s of success",
		`WARN hookd outage began cause=record attempts error=disk I/O error`,
		`INFO hookd outage ended cause=record attempts failures=20 lasted=9.75s`)

	// A success within Quiet of the last failure, then none: the next look at the cause (health
	// reads State) ends the outage once Quiet has passed.
	c.Fail(errors.New("disk I/O error"))
	clk.advance(100 * time.Millisecond)
	c.OK()
	clk.advance(time.Second)
	if _, ok := c.State(); !ok {
		t.Fatal("State ended the outage 1.1 s after its last failure")
	}
	clk.advance(time.Second)
	if s, ok := c.State(); ok {
		t.Fatalf("State kept the outage on 2.1 s after its last failure, with a success since: %+v", s)
	}
	wantLines(t, h, "an outage ended by State",
		`WARN hookd outage began cause=record attempts error=disk I/O error`,
		`INFO hookd outage ended cause=record attempts failures=1 lasted=100ms`)
	// Without a success, it stays on however long it is quiet.
	c.Fail(errors.New("disk I/O error"))
	clk.advance(time.Hour)
	if _, ok := c.State(); !ok {
		t.Fatal("the outage ended without a success")
	}
}

// Causes of one Log are apart: each has its own lines and state, and Failing lists those failing
// in the order they were made.
func TestOutageCauses(t *testing.T) {
	t.Parallel()
	log, clk, h := setup()
	fetch, settle, other := log.Cause("queue: fetch jobs"), log.Cause("queue: write job outcomes"), log.Cause("retention")
	if log.Cause("queue: fetch jobs") != fetch {
		t.Fatal("Cause made a second cause of one name")
	}
	settle.Fail(errors.New("disk full"), slog.Int("jobs", 3))
	clk.advance(time.Second)
	fetch.Fail(errors.New("read-only"))
	other.OK()
	wantLines(t, h, "two causes failing",
		`WARN hookd outage began cause=queue: write job outcomes error=disk full jobs=3`,
		`WARN hookd outage began cause=queue: fetch jobs error=read-only`)
	got := log.Failing()
	if len(got) != 2 || got[0].Cause != "queue: fetch jobs" || got[1].Cause != "queue: write job outcomes" || got[1].Err != "disk full" {
		t.Fatalf("Failing: %+v", got)
	}
	// Recent leaves out an outage whose last failure is older than the window.
	clk.advance(4 * time.Second)
	if _, ok := settle.Recent(5 * time.Second); !ok {
		t.Fatal("Recent left out a failure 5 s old with a window of 5 s")
	}
	clk.advance(time.Millisecond)
	if s, ok := settle.Recent(5 * time.Second); ok {
		t.Fatalf("Recent kept a failure older than the window: %+v", s)
	}
	if _, ok := settle.State(); !ok {
		t.Fatal("the outage ended without a success")
	}
	fetch.OK()
	if got := log.Failing(); len(got) != 1 || got[0].Cause != "queue: write job outcomes" {
		t.Fatalf("Failing after fetch recovered: %+v", got)
	}
	h.take()
	// The log's OK is a success of each cause.
	log.OK()
	wantLines(t, h, "every cause recovered", `INFO hookd outage ended cause=queue: write job outcomes failures=1 lasted=5.001s`)
	if got, n := log.Failing(), log.Len(); len(got) != 0 || n != 3 {
		t.Fatalf("after the log's OK: failing %+v, %d causes", got, n)
	}
}

// A long error is cut, on a character boundary, so that a driver quoting a statement does not
// fill the log.
func TestOutageLongError(t *testing.T) {
	t.Parallel()
	log, _, h := setup()
	log.Cause("sweep").Fail(errors.New(strings.Repeat("é", 400)))
	got := h.take()
	if len(got) != 1 || !strings.HasSuffix(got[0], "…") || len(got[0]) > maxErr+100 || !strings.Contains(got[0], "é") ||
		strings.ContainsRune(got[0], '\uFFFD') {
		t.Fatalf("line of a long error: %q", got)
	}
}

// Fail and OK from many goroutines, as the lanes and the recorder call them, make one outage with
// every failure counted (run with -race).
func TestOutageConcurrent(t *testing.T) {
	t.Parallel()
	log, clk, h := setup()
	c := log.Cause("queue: fetch jobs")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				c.Fail(errors.New("down"))
				c.OK()
			}
		})
	}
	wg.Wait()
	if s, _ := c.State(); s.Failures != 8000 {
		t.Fatalf("failures counted: %d, want 8000", s.Failures)
	}
	clk.advance(DefaultQuiet)
	c.OK()
	wantLines(t, h, "8000 failures at once, then a success",
		`WARN hookd outage began cause=queue: fetch jobs error=down`,
		`INFO hookd outage ended cause=queue: fetch jobs failures=8000 lasted=0s`)
}

// A nil logger discards; a nil error counts as a failure.
func TestOutageDefaults(t *testing.T) {
	t.Parallel()
	c := New(nil, nil).Cause("x")
	c.Fail(nil)
	if s, ok := c.State(); !ok || s.Err != "unknown" || s.Failures != 1 {
		t.Fatalf("state after Fail(nil): %+v %v", s, ok)
	}
}
