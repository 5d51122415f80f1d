package hookd_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

const unstartedWarning = "this client was never started"

// unstartedRig is an SQLite store with application acme and one endpoint, and a client on it,
// never started, whose logs are recorded.
func unstartedRig(t *testing.T, cfg *hookd.Config) (context.Context, *sqlite.Store, *hookd.Client, *logcheck.Log) {
	t.Helper()
	ctx := t.Context()
	log := logcheck.New(t)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if cfg == nil {
		cfg = &hookd.Config{}
	}
	cfg.Logger = log.Logger()
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetUnstartedWarningForTest(50 * time.Millisecond)
	t.Cleanup(func() { c.Stop(context.Background()) })
	if _, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: "https://acme.example/hooks"}); err != nil {
		t.Fatal(err)
	}
	return ctx, store, c, log
}

func sendOne(t *testing.T, ctx context.Context, c *hookd.Client) *hookd.SendResult {
	t.Helper()
	res, err := c.Send(ctx, "acme", &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitChecks waits until the client has looked n times whether its deliveries wait.
func waitChecks(t *testing.T, c *hookd.Client, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for checks, _ := c.UnstartedChecksForTest(); checks < n; checks, _ = c.UnstartedChecksForTest() {
		if time.Now().After(deadline) {
			t.Fatalf("%d checks after 20 s, want %d", checks, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnstartedClientWarns: deliveries sent on a client never started, which nobody works, give
// one warning that says to call Start, however many sends follow.
func TestUnstartedClientWarns(t *testing.T) {
	t.Parallel()
	ctx, _, c, log := unstartedRig(t, nil)
	sendOne(t, ctx, c)
	waitChecks(t, c, 1)
	sendOne(t, ctx, c)
	if n := strings.Count(log.String(), unstartedWarning); n != 1 {
		t.Fatalf("%d warnings, want 1; logs:\n%s", n, log)
	}
	if !strings.Contains(log.String(), "Client.Start") || c.Started() {
		t.Fatalf("the warning does not name Client.Start, or Started is true; logs:\n%s", log)
	}
	if checks, _ := c.UnstartedChecksForTest(); checks != 1 {
		t.Fatalf("%d checks after the warning, want none more", checks)
	}
}

// TestEnqueueOnlyClientDoesNotWarn: a client set to only enqueue never arms the watch, and may not
// be started.
func TestEnqueueOnlyClientDoesNotWarn(t *testing.T) {
	t.Parallel()
	ctx, _, c, log := unstartedRig(t, &hookd.Config{EnqueueOnly: true})
	sendOne(t, ctx, c)
	if _, armed := c.UnstartedChecksForTest(); armed {
		t.Fatal("a send on an EnqueueOnly client armed the watch")
	}
	if err := c.Start(ctx); err == nil || !strings.Contains(err.Error(), "EnqueueOnly") {
		t.Fatalf("Start of an EnqueueOnly client: %v, want an error naming EnqueueOnly", err)
	}
	if strings.Contains(log.String(), unstartedWarning) {
		t.Fatalf("warned:\n%s", log)
	}
}

// TestUnstartedClientWorkedElsewhere: a client never started whose deliveries another started
// client works (another process) does not warn.
func TestUnstartedClientWorkedElsewhere(t *testing.T) {
	t.Parallel()
	ctx, store, c, log := unstartedRig(t, nil)
	worker, err := hookd.NewClient(store, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Stop(context.Background()) })
	if !worker.Started() || c.Started() {
		t.Fatal("Started: want true for the started client alone")
	}
	c.SetUnstartedWarningForTest(time.Hour) // the check runs once the worker has worked the delivery
	res := sendOne(t, ctx, c)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := store.ListDeliveries(ctx, hookd.DeliveryFilter{MessageID: res.Message.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Data) == 1 && d.Data[0].Attempts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %+v: not attempted after 20 s", d.Data)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.CheckUnstartedForTest()
	waitChecks(t, c, 1)
	if strings.Contains(log.String(), unstartedWarning) {
		t.Fatalf("warned although another client works the deliveries:\n%s", log)
	}
	if _, armed := c.UnstartedChecksForTest(); armed {
		t.Fatal("the watch stays armed after finding the delivery worked")
	}
}
