package hookd_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

// The child half of TestKilledWithDeliveryInFlight: a process that sends one message and is
// killed while its attempt hangs.
func TestMain(m *testing.M) {
	if path := os.Getenv("HOOKD_CRASH_CHILD_DB"); path != "" {
		crashChild(path, os.Getenv("HOOKD_CRASH_CHILD_URL"))
		return
	}
	os.Exit(m.Run())
}

func crashChild(path, url string) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		panic(err)
	}
	cfg := testConfig()
	cfg.Delivery.Timeout = time.Minute
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		panic(err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "acme", UID: "acme"})
	if err != nil {
		panic(err)
	}
	if _, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: url, UID: "ep"}); err != nil {
		panic(err)
	}
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	if _, err := c.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", EventID: "evt-1", Payload: map[string]int{"n": 1}}); err != nil {
		panic(err)
	}
	select {} // killed by the parent
}

// A process killed (SIGKILL) with an attempt in flight loses nothing: the next process on the
// file takes the job over at start and delivers.
func TestKilledWithDeliveryInFlight(t *testing.T) {
	t.Parallel()
	recv := hookdtest.NewReceiver()
	defer recv.Close()
	var healthy atomic.Bool
	recv.Handle("/ep", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if healthy.Load() {
			w.WriteHeader(200)
			return
		}
		<-r.Context().Done()
	}))
	path := filepath.Join(t.TempDir(), "crash.db")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "HOOKD_CRASH_CHILD_DB="+path, "HOOKD_CRASH_CHILD_URL="+recv.URL("/ep"))
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := recv.Wait(ctx, "/ep", 1); err != nil {
		child.Process.Kill()
		t.Fatalf("the child's attempt never arrived: %v", err)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	healthy.Store(true)
	log := logcheck.New(t)
	store, err := sqlite.Open(ctx, path, &sqlite.Config{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := testConfig()
	cfg.Logger = log.Logger()
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background())
	msg, err := c.GetMessage(ctx, "acme", "evt-1")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := c.GetEndpoint(ctx, "acme", "ep")
	if err != nil {
		t.Fatal(err)
	}
	for {
		d, err := store.GetDeliveryFor(ctx, msg.ID, ep.ID)
		if err == nil && d.Status == hookd.DeliveryDelivered {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("not delivered after the restart: %+v %v", d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(recv.Requests("/ep")); n != 2 {
		t.Errorf("receiver got %d requests, want 2 (the one cut by the kill, and the delivery)", n)
	}
}
