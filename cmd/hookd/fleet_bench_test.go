package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchmarkFleetWorkers measures deliveries/s through one API process and 1 or 2 worker
// processes on one PostgreSQL database: messages sent over the API by 8 producers, each to 10
// endpoints of a receiver in this process, until all have arrived. Two receivers:
//
//   - receiver=fast answers at once: 1,000 messages, 10,000 deliveries, with the default
//     workers. On one machine this measures its CPU: every process shares its cores.
//   - receiver=100ms answers after 100 ms, as a slow customer's server does: 200 messages, 2,000
//     deliveries, with --workers 10 (10 first attempts in flight a process). This measures what
//     a second worker process adds where the workers' slots, not the CPU, are the limit.
//
// Run it with
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run x -bench FleetWorkers -benchtime 1x ./cmd/hookd/
func BenchmarkFleetWorkers(b *testing.B) {
	bin := buildHookd(b)
	for _, r := range []struct {
		name     string
		delay    time.Duration
		messages int
		args     []string
	}{
		{"fast", 0, 1000, nil},
		{"100ms", 100 * time.Millisecond, 200, []string{"--workers", "10"}},
	} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("receiver=%s/processes=%d", r.name, workers), func(b *testing.B) {
				var total time.Duration
				for range b.N {
					total += fleetRun(b, bin, workers, r.messages, r.delay, r.args)
				}
				b.ReportMetric(float64(10*r.messages*b.N)/total.Seconds(), "deliveries/s")
			})
		}
	}
}

// fleetRun sends messages, each to 10 endpoints, through a fresh fleet of workers worker
// processes (started with workerArgs) whose receiver answers after delay, and returns the time
// until the last delivery arrived.
func fleetRun(b *testing.B, bin string, workers, messages int, delay time.Duration, workerArgs []string) time.Duration {
	b.StopTimer()
	dbURL := freshDatabase(b)
	recv := newSlowReceiver(delay, nil)
	defer recv.srv.Close()
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8"}
	// The producers send to one application: the per-application message rate, a tenant's
	// quota, is lifted so that what is measured is the fleet.
	api := startProcess(b, bin, append([]string{"--role", "api", "--max-messages-per-second-per-app", "none"}, common...)...)
	mustCall(b, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app", testAdminToken, `{"name":"fleet","uid":"fleet"}`)
	for i := range 10 {
		mustCall(b, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app/fleet/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s/ep%d"}`, recv.srv.URL, i))
	}
	for range workers {
		startProcess(b, bin, append(append([]string{"--role", "worker"}, common...), workerArgs...)...)
	}
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := p; i < messages; i += 8 {
				mustCall(b, http.StatusAccepted, http.MethodPost, api.url+"/api/v1/app/fleet/msg", testAdminToken,
					fmt.Sprintf(`{"eventType":"fleet.bench","payload":{"seq":%d}}`, i))
			}
		})
	}
	wg.Wait()
	for {
		if pairs, _ := recv.distinct(); pairs == 10*messages {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("%d deliveries did not arrive within 5 min", 10*messages)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}
