package bench

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/signature"
)

// BenchmarkSignedPostFloor measures the part of a B1 delivery that no store or queue can take
// away: signing it, POSTing it with hookd's delivery client, and B1's receiver reading and
// verifying it with the Standard Webhooks library, in one process on 32 goroutines, B1's
// body and its 10 endpoints. It reports this process's CPU time (user + system, getrusage) per
// delivery: the floor under B1's "CPU per delivery: this process". Run it with
//
//	go test -run x -bench SignedPostFloor -benchtime 20000x ./cmd/hookd/internal/bench/
func BenchmarkSignedPostFloor(b *testing.B) {
	recv, err := newBenchReceiver()
	if err != nil {
		b.Fatal(err)
	}
	defer recv.close()
	const endpoints = 10
	signers := make([]*signature.Signer, endpoints)
	urls := make([]string, endpoints)
	for i := range endpoints {
		secret := signature.NewSecret()
		path := fmt.Sprintf("/floor/ep%d", i)
		if err := recv.expect(path, secret, false); err != nil {
			b.Fatal(err)
		}
		if signers[i], err = signature.NewSigner(secret); err != nil {
			b.Fatal(err)
		}
		urls[i] = recv.url(path)
	}
	client := delivery.New(&delivery.Config{AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	defer client.CloseIdleConnections()
	cpu0, _, ok := selfUsage()
	if !ok {
		b.Skip("getrusage is unavailable")
	}
	b.ResetTimer()
	var (
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				id, body := fmt.Sprintf("msg_floor%020d", i), benchPayload("B1", i)
				h, err := signers[i%endpoints].Headers(signature.FlavorWebhook, id, time.Now(), body)
				if err != nil {
					b.Error(err)
					continue
				}
				res := client.Post(context.Background(), &delivery.Request{URL: urls[i%endpoints], Header: h, Body: body})
				if res.Outcome != delivery.Success {
					b.Errorf("post %d: %d %v", i, res.StatusCode, res.Err)
				}
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	b.StopTimer()
	cpu1, _, _ := selfUsage()
	if got := recv.deliveredCount(); got != b.N {
		b.Fatalf("the receiver verified %d of %d posts", got, b.N)
	}
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/delivery")
}
