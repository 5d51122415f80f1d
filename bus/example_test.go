package bus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/sqlite"
)

// invitationCreated is the payload of tenancy.invitation.created.
type invitationCreated struct {
	InvitationID   string `json:"invitationId"`
	OrganizationID string `json:"organizationId"`
	Email          string `json:"email"`
}

// Publish an event in the app's own transaction: the handler runs after the commit, and a
// transaction rolled back publishes nothing.
func ExampleBus_Publish() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hookd-bus-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	store, err := sqlite.Open(ctx, filepath.Join(dir, "app.db"), nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	// The app's own table, in the same database as the outbox.
	if _, err := store.DB().ExecContext(ctx, `CREATE TABLE invitations (id TEXT PRIMARY KEY, email TEXT NOT NULL)`); err != nil {
		panic(err)
	}

	b, err := bus.New(store, nil)
	if err != nil {
		panic(err)
	}
	var runs atomic.Int32
	handled := make(chan struct{}, 1)
	b.Subscribe("tenancy.invitation.created", func(ctx context.Context, d *bus.Dispatch) error {
		runs.Add(1)
		var p invitationCreated
		if err := json.Unmarshal(d.Payload, &p); err != nil {
			return err
		}
		fmt.Println("handled:", d.Name, p.Email)
		handled <- struct{}{}
		return nil
	})
	if err := b.Start(ctx); err != nil {
		panic(err)
	}
	defer b.Stop(ctx)

	// The business write and its event, in one transaction.
	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO invitations (id, email) VALUES (?, ?)`, "inv_1", "ada@example.com"); err != nil {
		panic(err)
	}
	err = b.Publish(ctx, tx, bus.Event{
		Name:        "tenancy.invitation.created",
		AggregateID: "inv_1",
		Payload:     invitationCreated{InvitationID: "inv_1", OrganizationID: "org_acme", Email: "ada@example.com"},
	})
	if err != nil {
		panic(err)
	}
	if err := tx.Commit(); err != nil {
		panic(err)
	}
	select {
	case <-handled:
	case <-time.After(10 * time.Second):
		fmt.Println("timed out waiting for the handler")
		return
	}

	// Rolled back: neither the row nor the event exists, and no handler runs.
	tx, err = store.DB().BeginTx(ctx, nil)
	if err != nil {
		panic(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO invitations (id, email) VALUES (?, ?)`, "inv_2", "bob@example.com"); err != nil {
		panic(err)
	}
	err = b.Publish(ctx, tx, bus.Event{
		Name:        "tenancy.invitation.created",
		AggregateID: "inv_2",
		Payload:     invitationCreated{InvitationID: "inv_2", OrganizationID: "org_acme", Email: "bob@example.com"},
	})
	if err != nil {
		panic(err)
	}
	if err := tx.Rollback(); err != nil {
		panic(err)
	}
	if err := b.Poll(ctx); err != nil {
		panic(err)
	}
	if err := b.Stop(ctx); err != nil {
		panic(err)
	}
	fmt.Println("handler runs:", runs.Load())
	// Output:
	// handled: tenancy.invitation.created ada@example.com
	// handler runs: 1
}

// Map internal event names to public webhook types, and find the organization a payload names.
func ExampleEventMap() {
	m := bus.EventMap{
		"tenancy.invitation.created":   "invitation.created",
		"billing.subscription.updated": "subscription.updated",
	}
	for _, name := range []string{"tenancy.invitation.created", "billing.subscription.updated", "iam.user.registered"} {
		public, ok := m.Public(name)
		fmt.Printf("%s -> %q %t\n", name, public, ok)
	}

	fmt.Printf("%q\n", bus.Organization(json.RawMessage(`{"organizationId":"org_acme","email":"ada@example.com"}`)))
	fmt.Printf("%q\n", bus.Organization(json.RawMessage(`{"orgId":"org_globex"}`)))
	fmt.Printf("%q\n", bus.Organization(json.RawMessage(`{"userId":"usr_1"}`)))
	// Output:
	// tenancy.invitation.created -> "invitation.created" true
	// billing.subscription.updated -> "subscription.updated" true
	// iam.user.registered -> "" false
	// "org_acme"
	// "org_globex"
	// ""
}
