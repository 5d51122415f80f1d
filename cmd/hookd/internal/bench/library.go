package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/localclient"
)

// This file holds the bench's library target, and the instance the PostgreSQL targets share
// with it: a hookd.Client in this process, called directly.

// embeddedTarget is hookd embedded in this process: a Client on a new SQLite file in dir, with
// its own queue in the same file, configured as the demos are (defaults, loopback allowed).
type embeddedTarget struct {
	dir string
}

func (t *embeddedTarget) name() string { return "library" }

func (t *embeddedTarget) describe() string {
	return "hookd library in this process (hookd.Client.Send); SQLite store with its own queue, a fresh file per run"
}

func (t *embeddedTarget) targetSendsPerSec() float64 { return 0 }

func (t *embeddedTarget) targetDeliveriesPerSec() float64 { return b1TargetPerSec }

func (t *embeddedTarget) targetP50() time.Duration { return b3TargetP50 }

func (t *embeddedTarget) servers() []string { return nil }

func (t *embeddedTarget) open(ctx context.Context, name string, timeout time.Duration) (benchInstance, error) {
	c, stop, err := localclient.Open(ctx, filepath.Join(t.dir, t.name()+"-"+name+".db"), localclient.Config(timeout))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "bench " + name, UID: "bench-" + name})
	if err != nil {
		stop()
		return nil, err
	}
	return &embeddedInstance{c: c, stop: func() error { stop(); return nil }, app: app.ID}, nil
}

// embeddedInstance is one application on one embedded client.
type embeddedInstance struct {
	c         *hookd.Client
	stop      func() error // stops the client, closes the store and removes what the target asks
	app       string
	endpoints []string // ids
}

func (i *embeddedInstance) addEndpoint(ctx context.Context, url string) (string, error) {
	return i.add(ctx, &hookd.EndpointIn{URL: url})
}

func (i *embeddedInstance) addOrderedEndpoint(ctx context.Context, url string) (string, error) {
	return i.add(ctx, &hookd.EndpointIn{URL: url, Ordered: true})
}

// add creates the endpoint in and returns its secret.
func (i *embeddedInstance) add(ctx context.Context, in *hookd.EndpointIn) (string, error) {
	ep, err := i.c.CreateEndpoint(ctx, i.app, in)
	if err != nil {
		return "", err
	}
	i.endpoints = append(i.endpoints, ep.ID)
	return i.c.EndpointSecret(ctx, i.app, ep.ID)
}

func (i *embeddedInstance) send(ctx context.Context, payload []byte) (string, error) {
	res, err := i.c.Send(ctx, i.app, &hookd.MessageIn{EventType: "bench.event", Payload: json.RawMessage(payload)})
	if err != nil {
		return "", err
	}
	if res.Deliveries != len(i.endpoints) {
		return "", fmt.Errorf("send %s: %d deliveries, want one per endpoint (%d)", res.Message.ID, res.Deliveries, len(i.endpoints))
	}
	return res.Message.ID, nil
}

func (i *embeddedInstance) count(ctx context.Context, status hookd.DeliveryStatus) (int, error) {
	return countDeliveries(ctx, i.c.Store(), i.endpoints, status)
}

func (i *embeddedInstance) close() error { return i.stop() }

// countDeliveries counts the deliveries in status to the endpoints with ids endpoints.
func countDeliveries(ctx context.Context, store hookd.Store, endpoints []string, status hookd.DeliveryStatus) (int, error) {
	n := 0
	for _, ep := range endpoints {
		f := hookd.DeliveryFilter{EndpointID: ep, Status: status, ListOptions: hookd.ListOptions{Limit: 250}}
		for {
			page, err := store.ListDeliveries(ctx, f)
			if err != nil {
				return 0, fmt.Errorf("count %s deliveries: %w", status, err)
			}
			n += len(page.Data)
			if page.Done || page.Iterator == "" {
				break
			}
			f.Iterator = page.Iterator
		}
	}
	return n, nil
}
