package riverqueue_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/queuetest"
	"github.com/hookd/hookd/riverqueue"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// TestRescueOnStartAfterCrash kills a process while it works a job: the job stays running and
// the dead process's River leader row stays in place. A new queue with RescueOnStart on the same
// file works the job at once; River alone would wait for RescueStuckJobsAfter and the leader's
// expiry.
func TestRescueOnStartAfterCrash(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// The process to kill is this test binary, running TestCrashHelperProcess.
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+b.path)
	cmd.Stderr = t.Output()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == crashReady {
				ready <- nil
				return
			}
		}
		ready <- fmt.Errorf("helper ended without %q: %v", crashReady, sc.Err())
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper process not ready in 30s")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	_ = cmd.Wait()

	rows := jobRows(t, b.db)
	if len(rows) != 1 || rows[0].state != "running" || rows[0].attempt != 1 {
		t.Fatalf("river_job after the crash: %+v; want one job running, attempt 1", rows)
	}
	if n := leaderRows(t, b.db); n != 1 {
		t.Fatalf("%d leader rows after the crash, want the dead one", n)
	}

	// The restarted process.
	rec := queuetest.NewRecorder(nil)
	q := newQueue(t, b.db, &riverqueue.Config{RescueOnStart: true})
	began := time.Now()
	start(t, q, rec.Handle)
	c := rec.Wait(t, 1, 5*time.Second)[0]
	t.Logf("rescued job worked %s after Start", c.At.Sub(began))
	if c.At.Sub(began) > time.Second {
		t.Errorf("rescued job worked %s after Start, want within 1s", c.At.Sub(began))
	}
	if want := crashJob(); c.Job != want {
		t.Errorf("rescued job %+v, want %+v", c.Job, want)
	}
	rows = waitState(t, b.db, "completed", 5*time.Second)
	if rows[0].attempt != 1 {
		t.Errorf("River attempt %d after rescue and one success, want 1 (the lost attempt given back)", rows[0].attempt)
	}
}

const (
	crashDBEnv = "RIVERQUEUE_CRASH_DB"
	crashReady = "job running"
)

func crashJob() hookd.Job {
	return hookd.Job{DeliveryID: "dlv_crash", Attempt: 1, Trigger: hookd.TriggerScheduled}
}

// TestCrashHelperProcess is the process that TestRescueOnStartAfterCrash kills: it enqueues a
// job, works it with a handler that never returns, waits until it leads River, says so on
// stdout and waits to be killed. It does nothing in a normal test run.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("helper process for TestRescueOnStartAfterCrash")
	}
	db := openDB(t, path)
	q, err := riverqueue.New(riversqlite.New(db), nil, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := queuetest.NewRecorder(func(context.Context, hookd.Job, int) error { select {} })
	start(t, q, rec.Handle)
	enqueue(t, db, q, crashJob())
	rec.Wait(t, 1, 20*time.Second)
	for leaderRows(t, db) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(crashReady)
	select {}
}

// leaderRows counts River's leader rows.
func leaderRows(t testing.TB, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM river_leader`).Scan(&n); err != nil {
		t.Fatalf("count leaders: %v", err)
	}
	return n
}

// TestRescueOnStartLeavesOtherKinds marks jobs running by hand: only hookd's kind is rescued.
func TestRescueOnStartLeavesOtherKinds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, &riverqueue.Config{RescueOnStart: true})
	enqueue(t, b.db, q, hookd.Job{DeliveryID: "dlv_1", Attempt: 1})
	for _, stmt := range []string{
		`UPDATE river_job SET state = 'running', attempt = 1, attempted_at = datetime('now', 'subsec')`,
		`INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at)
		 VALUES ('{}', 'other_kind', 25, 'default', 'running', 1, datetime('now', 'subsec'))`,
	} {
		if _, err := b.db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	start(t, q, b.rec.Handle)
	b.rec.Wait(t, 1, 2*time.Second)

	var state string
	if err := b.db.QueryRow(`SELECT state FROM river_job WHERE kind = 'other_kind'`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "running" {
		t.Errorf("job of another kind is %s, want left running", state)
	}
}
