package redisqueue_test

import (
	"context"
	"log"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
)

// A Client whose jobs go through Redis. The queue is sized with the same workers and job timeout
// the Client would give its store's own queue, and closed after the Client stops.
func Example() {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, "hookd.db", nil) // or postgres.Open, for several processes
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	q, err := redisqueue.New("redis://127.0.0.1:6379/0", store,
		&hookd.QueueConfig{JobTimeout: 45 * time.Second},
		&redisqueue.Config{Namespace: "hookd-prod"}) // one per installation sharing the Redis
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	client, err := hookd.NewClient(store, &hookd.Config{Queue: q})
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil { // reaches Redis; starts the lanes and the sweeper
		log.Fatal(err)
	}
	defer client.Stop(ctx)

	if _, err := client.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"invoice": "in_1"}}); err != nil {
		log.Fatal(err)
	}
}
