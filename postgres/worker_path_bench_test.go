package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// BenchmarkWorkerPath counts what this process spends on the workers' side of a delivery on
// PostgreSQL: b.N deliveries (b.N/10 messages to 10 endpoints) are queued with the client
// stopped, then the client starts and works them all, each a first attempt answered 204 by a
// receiver that allocates nothing per request. Only the working is counted, from Start until the
// client has stopped: per delivery, the heap allocations and bytes (runtime.MemStats, the whole
// process), the GC cycles, and the CPU time of this process (getrusage, user and system; it
// depends on what else the machine runs, the allocation counts do not).
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run '^$' -bench WorkerPath -benchtime 20000x ./postgres/
func BenchmarkWorkerPath(b *testing.B) {
	const endpoints = 10
	bd := setup(b)
	ctx := context.Background()
	recv := startPlainReceiver(b)

	want := int64(b.N)
	client, recorded, done := deliveryBenchClient(b, bd, slog.New(slog.DiscardHandler), recv.url, endpoints, want)
	// Queue the deliveries first: b.N rounded up to whole messages; the count waits for b.N.
	payload := json.RawMessage(`{"type":"bench.event","data":{"id":"evt_2Qd8kZ","amount":1299,"currency":"eur","customer":{"id":"cus_81","email":"a@example.com"}}}`)
	for range (b.N + endpoints - 1) / endpoints {
		if _, err := client.Send(ctx, "bench", &hookd.MessageIn{EventType: "bench.event", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU(b)
	stopProfile := profileCPU(b)
	b.ResetTimer()
	if err := client.Start(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d deliveries recorded delivered after 5 minutes", recorded.Load(), want)
	}
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	stopProfile()
	cpu1 := processCPU(b)
	runtime.ReadMemStats(&m1)

	if n := recv.served.Load(); n < want {
		b.Fatalf("the receiver answered %d requests, want at least %d", n, want)
	}
	n := float64(want)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/delivery")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/delivery")
	b.ReportMetric(float64(m1.NumGC-m0.NumGC)/n*1000, "gc/1k-deliveries")
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/n, "cpu-µs/delivery")
}

// profileCPU writes a CPU profile of the working to the file HOOKD_BENCH_CPUPROFILE names, when
// set, and returns the function that ends it.
func profileCPU(b *testing.B) func() {
	name := os.Getenv("HOOKD_BENCH_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is this process's CPU time so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// plainReceiver answers every HTTP/1.1 request on a kept-alive connection with 204 and a Date
// header, reading the request with one buffer per connection, so that its own allocations do
// not blur the counts of the process it shares.
type plainReceiver struct {
	url    string
	served atomic.Int64
}

func startPlainReceiver(b *testing.B) *plainReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	r := &plainReceiver{url: "http://" + ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(c)
		}
	}()
	return r
}

var (
	contentLength = []byte("content-length:")
	noContent     = []byte("HTTP/1.1 204 No Content\r\nDate: Wed, 02 Dec 2026 14:00:00 GMT\r\n\r\n")
)

func (r *plainReceiver) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		size := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
			if len(line) > len(contentLength) && bytes.EqualFold(line[:len(contentLength)], contentLength) {
				for _, ch := range bytes.TrimSpace(line[len(contentLength):]) {
					size = size*10 + int(ch-'0')
				}
			}
		}
		if _, err := br.Discard(size); err != nil {
			return
		}
		r.served.Add(1)
		if _, err := c.Write(noContent); err != nil {
			return
		}
	}
}
