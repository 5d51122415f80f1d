package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/hostile"
	"github.com/hookd/hookd/internal/procmem"
	"github.com/hookd/hookd/sqlite"
)

// TestServeHostileReceivers runs the hostile receivers of the root package's
// TestHostileReceivers against a hookd serve process of its own: each is one failed attempt with
// a readable error, and the process's peak resident set (VmHWM, since it started) stays far
// below what a 1 GiB response read into memory would take.
func TestServeHostileReceivers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and waits for a receiver that trickles its headers")
	}
	t.Parallel()
	bin := buildHookd(t)
	db := filepath.Join(t.TempDir(), "hookd.db")
	const timeout = 2 * time.Second
	p := startProcess(t, bin, "--db", "sqlite:"+db, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8",
		"--timeout", timeout.String(), "--retry-schedule", "1h")
	pid := p.cmd.Process.Pid
	startKiB, rssErr := procmem.PeakKiB(pid)

	app := mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app", testAdminToken, `{"name":"hostile","uid":"hostile"}`)
	receivers := map[string]hostile.Receiver{} // by endpoint id
	for _, r := range hostile.Start(t, timeout) {
		ep := mustCall(t, http.StatusCreated, http.MethodPost, p.url+"/api/v1/app/hostile/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":%q,"description":%q}`, r.URL, r.Name))
		receivers[ep["id"].(string)] = r
	}
	msg := mustCall(t, http.StatusAccepted, http.MethodPost, p.url+"/api/v1/app/hostile/msg", testAdminToken,
		`{"eventType":"invoice.paid","payload":{"n":1}}`)
	msgID := msg["id"].(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		page := mustCall(t, http.StatusOK, http.MethodGet, p.url+"/api/v1/app/hostile/attempt/msg/"+msgID, testAdminToken, "")
		if data, _ := page["data"].([]any); len(data) >= len(receivers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every receiver has an attempt after 30 s:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var peakKiB int64
	if rssErr == nil {
		peakKiB, rssErr = procmem.PeakKiB(pid) // before it exits
	}

	// The attempts' errors are not in the API: read them from the database once hookd is gone.
	p.terminate(t, 20*time.Second)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.ListAttempts(ctx, hookd.AttemptFilter{AppID: app["id"].(string), MessageID: msgID})
	if err != nil {
		t.Fatal(err)
	}
	hostile.CheckAttempts(t, receivers, page.Data)
	const boundKiB = 256 << 10
	switch {
	case errors.Is(rssErr, errors.ErrUnsupported):
		t.Logf("peak RSS not measured: %v", rssErr)
	case rssErr != nil:
		t.Errorf("peak RSS of hookd serve: %v", rssErr)
	default:
		t.Logf("peak RSS of hookd serve: %s once listening, %s when every attempt was recorded", mib(startKiB), mib(peakKiB))
		if peakKiB > boundKiB {
			t.Errorf("peak RSS of hookd serve %s, over %s: a response body was not capped", mib(peakKiB), mib(boundKiB))
		}
	}
}

// mib formats KiB as MiB, for the test's log.
func mib(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
