package hookd_test

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/hostile"
	"github.com/hookd/hookd/internal/procmem"
)

// Hostile receivers, all at once: each delivery to one is one failed attempt with a readable
// error, and the process's heap and resident set stay bounded while a receiver answers 1 GiB.
// (cmd/hookd's TestServeHostileReceivers measures a hookd serve process the same way.)
func TestHostileReceivers(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Delivery.Timeout = 2 * time.Second
	cfg.RetrySchedule = []time.Duration{time.Hour} // one attempt each, within the test
	b := setup(t, cfg)

	receivers := map[string]hostile.Receiver{} // by endpoint id
	for _, r := range hostile.Start(t, cfg.Delivery.Timeout) {
		ep, err := b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: r.URL, Description: r.Name})
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		receivers[ep.ID] = r
	}

	// The resident set is the process's, other tests' included when they run beside this one;
	// the bound is far above them and far below a 1 GiB body held in memory.
	rssErr := procmem.ResetPeak()
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	m := b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	deadline := time.Now().Add(30 * time.Second)
	var atts []hookd.Attempt
	for time.Now().Before(deadline) {
		p, err := b.client.ListAttempts(b.ctx, b.app.ID, hookd.AttemptFilter{MessageID: m.Message.ID})
		if err != nil {
			t.Fatal(err)
		}
		if atts = p.Data; len(atts) >= len(receivers) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-sampled
	var peakRSSKiB int64
	if rssErr == nil {
		peakRSSKiB, rssErr = procmem.PeakKiB(0)
	}

	hostile.CheckAttempts(t, receivers, atts)
	const bound = 256 << 20
	t.Logf("peak heap in use while the receivers answered: %d MiB", peakHeap.Load()>>20)
	if peakHeap.Load() > bound {
		t.Errorf("peak heap in use %d MiB, over %d MiB: a response body was not capped", peakHeap.Load()>>20, bound>>20)
	}
	switch {
	case errors.Is(rssErr, errors.ErrUnsupported):
		t.Logf("peak RSS not measured: %v", rssErr)
	case rssErr != nil:
		t.Errorf("peak RSS: %v", rssErr)
	default:
		t.Logf("peak RSS of the test process while the receivers answered: %d MiB", peakRSSKiB>>10)
		if peakRSSKiB<<10 > bound {
			t.Errorf("peak RSS %d MiB, over %d MiB: a response body was not capped", peakRSSKiB>>10, bound>>20)
		}
	}
}
