package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/localclient"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
)

// runPitfall handles "hookd pitfall": it measures, on this machine, an order handler that sends its
// webhooks inline against one that queues them with hookd, and one hanging endpoint beside healthy
// ones.
func runPitfall(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "pitfall", "pitfall [--timeout 1s]\n\nMeasures, on this machine, an order handler that sends its webhooks inline against\none that queues them with hookd, and one hanging endpoint beside healthy ones.")
	timeout := f.Duration("timeout", time.Second, "how long the hanging endpoint is waited for")
	if err := f.parse(args); err != nil {
		return err
	}
	if *timeout < 100*time.Millisecond {
		return usageErrorf("use --timeout 100ms or more", "pitfall: --timeout %s is too short to tell hanging from slow", *timeout)
	}
	dir, err := os.MkdirTemp("", "hookd-pitfall-")
	if err != nil {
		return failf("", "pitfall: %v", err)
	}
	defer os.RemoveAll(dir)
	var b strings.Builder
	if err := pitfallInline(ctx, &b, filepath.Join(dir, "one.db"), *timeout); err != nil {
		return failf("", "pitfall 1: %v", err)
	}
	if err := pitfallIsolation(ctx, &b, dir, *timeout); err != nil {
		return failf("", "pitfall 2: %v", err)
	}
	_, err = io.WriteString(e.stdout, b.String())
	return err
}

// pitfallInline compares an order handler that POSTs its webhooks inline with one that hands them
// to hookd, against three endpoints of which one hangs.
func pitfallInline(ctx context.Context, w io.Writer, path string, timeout time.Duration) error {
	recv := hookdtest.NewReceiver()
	defer recv.Close()
	recv.Handle("/c", hookdtest.Hang())
	paths := []string{"/a", "/b", "/c"}

	// Inline: the handler POSTs to each endpoint before answering; a failure is logged and lost.
	inlineFailed := 0
	poster := delivery.New(localclient.Config(timeout).Delivery)
	inline := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		for _, p := range paths {
			res := poster.Post(r.Context(), &delivery.Request{URL: recv.URL(p), Body: []byte(`{"type":"order.created"}`)})
			if res.Outcome != delivery.Success {
				inlineFailed++
			}
		}
		rw.WriteHeader(http.StatusCreated)
	}))
	defer inline.Close()
	inlineTook, err := post(ctx, inline.URL)
	if err != nil {
		return err
	}

	// Queued: the handler writes the message and its deliveries, and answers.
	c, stop, err := localclient.Open(ctx, path, localclient.Config(timeout, 50*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		return err
	}
	defer stop()
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "shop"})
	if err != nil {
		return err
	}
	eps := make([]*demoEndpoint, len(paths))
	for i, p := range paths {
		ep, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL(p)})
		if err != nil {
			return err
		}
		eps[i] = &demoEndpoint{name: "ep_" + p[1:], path: p, ep: ep}
	}
	var msgID string
	queued := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		res, err := c.Send(r.Context(), app.ID, &hookd.MessageIn{EventType: "order.created", Payload: map[string]string{"order": "o_1"}})
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		msgID = res.Message.ID
		rw.WriteHeader(http.StatusCreated)
	}))
	defer queued.Close()
	queuedTook, err := post(ctx, queued.URL)
	if err != nil {
		return err
	}
	states, err := waitSettled(ctx, c, app.ID, msgID, eps)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "1. POST /orders with three subscribed endpoints, one of them hanging (%s timeout)\n\n", timeout)
	fmt.Fprintf(w, "inline   answered in %-9s failed deliveries, never retried: %d\n", round(inlineTook), inlineFailed)
	fmt.Fprintf(w, "hookd    answered in %-9s after the retries:", round(queuedTook))
	for i, d := range eps {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(w, "%s %s %s", sep, d.name, states[i])
	}
	fmt.Fprintln(w)
	return nil
}

// pitfallIsolation sends three events to three endpoints, one hanging, through two workers, with
// the per-endpoint cap off and on, and counts the healthy deliveries finished before the hanging
// endpoint's first timeout.
func pitfallIsolation(ctx context.Context, w io.Writer, dir string, timeout time.Duration) error {
	fmt.Fprintf(w, "\n2. Three events to ep_a, ep_b and ep_c, where ep_c hangs (%s timeout), two workers\n\n", timeout)
	for _, isolated := range []bool{false, true} {
		recv := hookdtest.NewReceiver()
		recv.Handle("/c", hookdtest.Hang())
		cfg := localclient.Config(timeout, time.Minute)
		cfg.Workers = map[hookd.Lane]int{hookd.LaneFirst: 2}
		cfg.MaxInFlightPerEndpoint = -1
		label := "no per-endpoint cap     "
		if isolated {
			cfg.MaxInFlightPerEndpoint = 1
			label = "per-endpoint cap of 1   "
		}
		n, err := healthyBeforeTimeout(ctx, recv, filepath.Join(dir, fmt.Sprintf("iso-%t.db", isolated)), cfg, timeout)
		recv.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s ep_a and ep_b deliveries finished before ep_c's first timeout: %d of 6\n", label, n)
	}
	return nil
}

func healthyBeforeTimeout(ctx context.Context, recv *hookdtest.Receiver, path string, cfg *hookd.Config, timeout time.Duration) (int, error) {
	// The endpoints exist before the client starts, and the three sends commit together, so the
	// workers see all nine deliveries at once, in send order.
	store, err := localclient.OpenStore(ctx, path)
	if err != nil {
		return 0, err
	}
	c, err := hookd.NewClient(store, cfg)
	if err != nil {
		store.Close()
		return 0, err
	}
	defer store.Close()
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "shop"})
	if err != nil {
		return 0, err
	}
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, err := c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL(p)}); err != nil {
			return 0, err
		}
	}
	for i := range 3 {
		if _, err := c.Send(ctx, app.ID, &hookd.MessageIn{EventType: "order.created", Payload: map[string]int{"order": i}}); err != nil {
			return 0, err
		}
	}
	if err := c.Start(ctx); err != nil {
		return 0, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		c.Stop(sctx)
	}()
	// Wait out the first timeout, then count what arrived before it.
	reqs, err := recv.Wait(ctx, "/c", 1)
	if err != nil {
		return 0, err
	}
	firstTimeout := reqs[0].At.Add(timeout)
	time.Sleep(time.Until(firstTimeout) + 50*time.Millisecond)
	n := 0
	for _, r := range recv.Requests("") {
		if r.Path != "/c" && r.At.Before(firstTimeout) {
			n++
		}
	}
	return n, nil
}

// post POSTs an order and returns how long the answer took.
func post(ctx context.Context, url string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/orders", strings.NewReader(`{"sku":"x"}`))
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return time.Since(start), nil
}

func round(d time.Duration) string {
	if d < 10*time.Millisecond {
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
