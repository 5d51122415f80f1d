package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitOutput waits until out holds want, failing the test after 30 s.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", want, out)
		}
	}
}

// "hookd serve &" and a client command pasted together: the command finds nothing listening,
// says it waits, and goes on once serve accepts connections.
func TestClientWaitsForServe(t *testing.T) {
	t.Parallel()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"app", "create", "--name", "Acme", "--uid", "acme", "--url", "http://" + addr, "--token", testAdminToken},
			strings.NewReader(""), &stdout, &stderr)
	}()
	waitOutput(t, &stderr, "hookd: waiting for hookd serve to accept connections at http://"+addr+" (at most 10s)\n")
	startServe(t, "--listen", addr, "--db", "sqlite:"+filepath.Join(t.TempDir(), "hookd.db"), "--token", testAdminToken)
	select {
	case c := <-code:
		if c != exitOK || !strings.Contains(stdout.String(), "acme") {
			t.Fatalf("app create: exit %d\nstdout: %s\nstderr: %s", c, &stdout, &stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("app create still running 30 s after serve started; stderr:\n%s", &stderr)
	}
	if n := strings.Count(stderr.String(), "hookd: "); n != 1 {
		t.Fatalf("stderr has %d lines of hookd, want the one notice:\n%s", n, &stderr)
	}
}

// "hookd send --wait" waits for the message's deliveries to end, the retries included, and
// exits 1, saying how they stand, when one was not delivered.
func TestSendWaitReportsUndelivered(t *testing.T) {
	t.Parallel()
	b := setupAPI(t) // its retry schedule is 20 ms, 40 ms: three attempts, then failed
	b.ok(t, "", "app", "create", "--name", "Acme", "--uid", "acme")
	b.ok(t, "", "endpoint", "add", "acme", "--endpoint-url", "http://127.0.0.1:"+strconv.Itoa(freePort(t))+"/hook", "--uid", "closed")
	r := b.cli(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", `{"invoice":"in_1"}`, "--wait", "30s")
	if r.code != exitFailure || !strings.Contains(r.stderr, "after 30s it is delivered to 0 of 1 endpoints (1 failed, 0 still pending)\nhint: hookd attempts acme --msg msg_") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^delivered: +0 of 1; 1 failed$`).MatchString(r.stdout) {
		t.Fatalf("stdout lacks how the deliveries stand:\n%s", r.stdout)
	}
	var attempts []attemptJSON
	b.okJSON(t, &attempts, "", "attempts", "acme", "--endpoint", "closed")
	if len(attempts) != 3 {
		t.Fatalf("%d attempts when send returned, want the 3 of the schedule: %+v", len(attempts), attempts)
	}
	if r := b.cli(t, "", "send", "acme", "--event-type", "invoice.paid", "--data", "{}", "--wait", "-1s"); r.code != exitUsage || !strings.Contains(r.stderr, "--wait must be 0 or more") {
		t.Fatalf("--wait -1s: exit %d, stderr %q", r.code, r.stderr)
	}
}
