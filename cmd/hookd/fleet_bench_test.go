package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// BenchmarkFleetWorkers measures deliveries/s through one API process and 1 or 2 worker
// processes on one PostgreSQL database: 1,000 messages sent over the API by 8 producers, each
// to 10 endpoints of a receiver in this process, until all 10,000 have arrived. Run it with
//
//	HOOKD_TEST_POSTGRES_URL=postgres://... go test -run x -bench FleetWorkers -benchtime 1x ./cmd/hookd/
func BenchmarkFleetWorkers(b *testing.B) {
	bin := buildHookd(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("processes=%d", workers), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += fleetRun(b, bin, workers)
			}
			b.ReportMetric(float64(10000*b.N)/total.Seconds(), "deliveries/s")
		})
	}
}

// fleetRun sends 10,000 deliveries through a fresh fleet and returns the time until the last
// arrived.
func fleetRun(b *testing.B, bin string, workers int) time.Duration {
	b.StopTimer()
	dbURL := freshDatabase(b)
	recv := newFleetReceiver()
	defer recv.srv.Close()
	common := []string{"--db", dbURL, "--token", testAdminToken, "--allow-subnets", "127.0.0.0/8"}
	api := startProcess(b, bin, append([]string{"--role", "api"}, common...)...)
	mustCall(b, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app", testAdminToken, `{"name":"fleet","uid":"fleet"}`)
	for i := range 10 {
		mustCall(b, http.StatusCreated, http.MethodPost, api.url+"/api/v1/app/fleet/endpoint", testAdminToken,
			fmt.Sprintf(`{"url":"%s/ep%d"}`, recv.srv.URL, i))
	}
	for range workers {
		startProcess(b, bin, append([]string{"--role", "worker"}, common...)...)
	}
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := p; i < 1000; i += 8 {
				mustCall(b, http.StatusAccepted, http.MethodPost, api.url+"/api/v1/app/fleet/msg", testAdminToken,
					fmt.Sprintf(`{"eventType":"fleet.bench","payload":{"seq":%d}}`, i))
			}
		})
	}
	wg.Wait()
	for {
		if pairs, _ := recv.distinct(); pairs == 10000 {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatal("10,000 deliveries did not arrive within 5 min")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}
