package hookd_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/sqlite"
)

// Send one message to one endpoint and read its attempt log.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "hookd-example-")
	defer os.RemoveAll(dir)

	// A customer's server (here a local one that verifies signatures).
	recv := hookdtest.NewReceiver()
	defer recv.Close()

	store, err := sqlite.Open(ctx, filepath.Join(dir, "hookd.db"), nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	client, err := hookd.NewClient(store, &hookd.Config{
		// The receiver is on 127.0.0.1, which the SSRF guard refuses unless allowed.
		Delivery: &delivery.Config{AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	defer client.Stop(ctx)

	app, _ := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	ep, _ := client.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL("/hooks"), EventTypes: []string{"invoice.paid"}})
	secret, _ := client.EndpointSecret(ctx, "acme", ep.ID)
	recv.SetSecret("/hooks", secret)

	res, err := client.Send(ctx, "acme", &hookd.MessageIn{
		EventType: "invoice.paid",
		EventID:   "in_1001:paid", // idempotency: a second Send with this id sends nothing
		Payload:   map[string]any{"invoice": "in_1001", "amount": 4200},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("deliveries:", res.Deliveries)

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reqs, _ := recv.Wait(wctx, "/hooks", 1)
	fmt.Println("verified:", reqs[0].Verified, "webhook-id is the message id:", reqs[0].WebhookID == res.Message.ID)
	for {
		d, _ := store.GetDeliveryFor(ctx, res.Message.ID, ep.ID)
		if d.Status != hookd.DeliveryPending {
			fmt.Println("delivery:", d.Status, "after", d.Attempts, "attempt")
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Output:
	// deliveries: 1
	// verified: true webhook-id is the message id: true
	// delivery: delivered after 1 attempt
}

// Set up an application and its endpoint so that the code may run again: the second run finds
// what the first created, and a plain create of a taken uid says which.
func ExampleClient_GetOrCreateApplication() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "hookd-example-")
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "hookd.db"), nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		panic(err)
	}

	setUp := func() (*hookd.Application, *hookd.Endpoint) {
		app, err := client.GetOrCreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
		if err != nil {
			panic(err)
		}
		ep, err := client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{UID: "invoices", URL: "https://acme.example/webhooks"})
		if errors.Is(err, hookd.ErrConflict) { // created by an earlier run
			ep, err = client.GetEndpoint(ctx, "acme", "invoices")
		}
		if err != nil {
			panic(err)
		}
		return app, ep
	}
	app1, ep1 := setUp()
	app2, ep2 := setUp()
	fmt.Println("same application:", app1.ID == app2.ID, "same endpoint:", ep1.ID == ep2.ID)

	_, err = client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
	var ce *hookd.ConflictError
	if errors.As(err, &ce) {
		fmt.Println("taken:", ce.Entity, ce.Field, ce.Value)
	}
	// Output:
	// same application: true same endpoint: true
	// taken: application uid acme
}
