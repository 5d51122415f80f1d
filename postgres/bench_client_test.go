package postgres_test

import (
	"context"
	"log/slog"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
)

// deliveryBenchClient returns a client of bd's store, not started, with one application and
// endpoints endpoints at url/ep0, url/ep1, …, the count of deliveries recorded delivered, and a
// channel closed once want of them are: the setup the benchmarks that deliver share.
func deliveryBenchClient(b *testing.B, bd *bundle, logger *slog.Logger, url string, endpoints int, want int64) (*hookd.Client, *atomic.Int64, <-chan struct{}) {
	b.Helper()
	ctx := context.Background()
	recorded := new(atomic.Int64)
	done := make(chan struct{})
	client, err := hookd.NewClient(bd.store, &hookd.Config{
		Delivery: &delivery.Config{Timeout: 5 * time.Second, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Logger:   logger,
		OnAttempt: func(_ *hookd.Attempt, status hookd.DeliveryStatus) {
			if status == hookd.DeliveryDelivered && recorded.Add(1) == want {
				close(done)
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "bench", UID: "bench"}); err != nil {
		b.Fatal(err)
	}
	for i := range endpoints {
		if _, err := client.CreateEndpoint(ctx, "bench", &hookd.EndpointIn{URL: url + "/ep" + strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
	return client, recorded, done
}
