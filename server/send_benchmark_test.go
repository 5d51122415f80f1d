package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// sendBench is an API as hookd serve builds it (the store's TokenAuth, the default limits) on a
// fresh SQLite file, with one application of ten endpoints, and a client that is not started: what
// a send costs the API and the store, without the workers that deliver it.
type sendBench struct {
	api   *Server
	store *sqlite.Store
	token string
	path  string // POST here to send
}

func newSendBench(b *testing.B) *sendBench {
	b.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "hookd.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		b.Fatal(err)
	}
	auth, token, err := NewTokenAuth(ctx, store, "", time.Now)
	if err != nil {
		b.Fatal(err)
	}
	api, err := New(client, &Config{Auth: auth})
	if err != nil {
		b.Fatal(err)
	}
	app, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "bench", UID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if _, err := client.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: fmt.Sprintf("https://ep%d.example/hook", i)}); err != nil {
			b.Fatal(err)
		}
	}
	return &sendBench{api: api, store: store, token: token, path: "/api/v1/app/" + app.ID + "/msg"}
}

// send POSTs one message as the bench's B1 does (header is extra request headers, in pairs) and
// fails unless it is answered 202.
func (sb *sendBench) send(b *testing.B, body []byte, header ...string) {
	req := httptest.NewRequest(http.MethodPost, sb.path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+sb.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	sb.api.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		b.Errorf("POST %s: %d %s", sb.path, rec.Code, rec.Body.String())
	}
}

// benchBody is B1's message body: an event type, an eventId and a small payload.
func benchBody(n int64) []byte {
	return fmt.Appendf(nil, `{"eventType":"invoice.paid","eventId":"evt-%d","payload":{"invoice":"in_%d","amount":4200,"currency":"usd"}}`, n, n)
}

// BenchmarkAPISend is POST /api/v1/app/{app}/msg with the admin token, 8 concurrent senders on
// 2 CPUs (as B1), each message fanned out to 10 endpoints; the handler is called directly, so no
// socket is counted.
//
//	go test -run '^$' -bench APISend -benchtime 20000x -cpuprofile /tmp/send.prof ./server
func BenchmarkAPISend(b *testing.B) {
	for _, idem := range []bool{false, true} {
		b.Run(fmt.Sprintf("idempotency-key=%v", idem), func(b *testing.B) {
			sb := newSendBench(b)
			var n atomic.Int64
			b.SetParallelism(4) // × GOMAXPROCS 2: 8 senders
			b.ReportAllocs()
			b.ResetTimer()
			before := readUsage(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if idem {
						sb.send(b, benchBody(i), "Idempotency-Key", fmt.Sprintf("key-%d", i))
					} else {
						sb.send(b, benchBody(i))
					}
				}
			})
			b.StopTimer()
			used := readUsage(b).minus(before)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
			b.ReportMetric(float64(used.cpu.Microseconds())/float64(b.N), "cpu-µs/send")
			b.ReportMetric(float64(used.writes)/float64(b.N), "writes/send")
			b.ReportMetric(float64(used.written)/float64(b.N), "written-B/send")
		})
	}
}

// usage is what this process used so far: CPU time (user and system), write system calls and
// the bytes they wrote (/proc/self/io's syscw and wchar). Unlike wall time, none of it grows with
// the load of other processes on the machine, and the writes count what SQLite writes to its WAL
// and journals.
type usage struct {
	cpu             time.Duration
	writes, written int64
}

func (u usage) minus(v usage) usage {
	return usage{cpu: u.cpu - v.cpu, writes: u.writes - v.writes, written: u.written - v.written}
}

func readUsage(b *testing.B) usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	u := usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	io, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return u // not Linux: CPU time only
	}
	for _, line := range strings.Split(string(io), "\n") {
		name, value, _ := strings.Cut(line, ": ")
		n, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "syscw":
			u.writes = n
		case "wchar":
			u.written = n
		}
	}
	return u
}
