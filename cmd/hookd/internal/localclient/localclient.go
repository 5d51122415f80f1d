// Package localclient opens a hookd client on a local SQLite file for receivers on 127.0.0.1:
// what "hookd demo", "hookd pitfall" and the bench's library target run.
package localclient

import (
	"context"
	"net/netip"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/sqlite"
)

// Config is a configuration for receivers on 127.0.0.1, so the SSRF guard lets loopback
// through, with the attempt timeout and retry schedule given (none: the defaults).
func Config(timeout time.Duration, schedule ...time.Duration) *hookd.Config {
	return &hookd.Config{
		Delivery: &delivery.Config{
			Timeout:      timeout,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: schedule,
	}
}

// OpenStore opens the embedded store at path.
func OpenStore(ctx context.Context, path string) (*sqlite.Store, error) {
	return sqlite.Open(ctx, path, nil)
}

// Open opens a store at path and starts a client on it; stop undoes both.
func Open(ctx context.Context, path string, cfg *hookd.Config) (c *hookd.Client, stop func(), err error) {
	store, err := OpenStore(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	c, err = hookd.NewClient(store, cfg)
	if err == nil {
		err = c.Start(ctx)
	}
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return c, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Stop(sctx)
		store.Close()
	}, nil
}
