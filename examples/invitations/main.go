// Command invitations shows the domain event bus (package bus) end to end, with nothing but
// SQLite: the app writes an invitation and its event tenancy.invitation.created in its own
// database transaction, and after the commit the bus fans the event out as a signed webhook
// (public type invitation.created) to the endpoint of the organization the payload names. A local
// receiver verifies the webhook with the official Standard Webhooks library and prints it.
// An event that names no organization (iam.user.registered) is skipped.
//
//	go run ./examples/invitations
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/sqlite"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "invitations:", err)
		os.Exit(1)
	}
}

// orgID is the organization of the example: the payload's organizationId, and the UID of its
// hookd application.
const orgID = "org_acme"

// invitationCreated is the payload of tenancy.invitation.created.
type invitationCreated struct {
	InvitationID   string    `json:"invitationId"`
	OrganizationID string    `json:"organizationId"`
	Email          string    `json:"email"`
	InvitedAt      time.Time `json:"invitedAt"`
}

// userRegistered is the payload of iam.user.registered: it names no organization.
type userRegistered struct {
	UserID string `json:"userId"`
	Email  string `json:"email"`
}

// run runs the example, printing to w, and returns once everything has stopped.
func run(ctx context.Context, w io.Writer) (err error) {
	out := &syncWriter{w: w}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	dir, err := os.MkdirTemp("", "hookd-invitations-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// One SQLite file holds the app's tables, hookd's, and the bus's outbox.
	store, err := sqlite.Open(ctx, filepath.Join(dir, "app.db"), nil)
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.DB().ExecContext(ctx, `CREATE TABLE invitations (
		id              TEXT PRIMARY KEY,
		organization_id TEXT NOT NULL,
		email           TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create table invitations: %w", err)
	}

	// The customer's server: verifies every webhook with the official Standard Webhooks library.
	recv, err := newReceiver(out)
	if err != nil {
		return err
	}
	defer recv.close()

	client, err := hookd.NewClient(store, &hookd.Config{
		Logger: log,
		// The receiver is on 127.0.0.1, which the SSRF guard refuses unless allowed.
		Delivery: &delivery.Config{AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer stop(&err, "hookd client", client.Stop)

	b, err := bus.New(store, &bus.Config{Logger: log})
	if err != nil {
		return err
	}
	// Internal event names → the public webhook types customers subscribe to.
	bus.SubscribeWebhooks(b, client, bus.EventMap{
		"tenancy.invitation.created":   "invitation.created",
		"billing.subscription.updated": "subscription.updated",
		// Mapped, but its payload names no organization: no customer to notify.
		"iam.user.registered": "user.registered",
	}, nil) // nil: each event goes to the application of its payload's organizationId
	// The app's own subscriber, after the webhook fan-out: tells us the event was dispatched.
	userDone := make(chan struct{}, 1)
	b.Subscribe("iam.user.registered", func(ctx context.Context, d *bus.Dispatch) error {
		if bus.Organization(d.Payload) == "" {
			fmt.Fprintf(out, "bus: %s names no organization: skipped, no webhook sent\n", d.Name)
		}
		select {
		case userDone <- struct{}{}:
		default:
		}
		return nil
	})
	if err := b.Start(ctx); err != nil {
		return err
	}
	defer stop(&err, "bus", b.Stop) // runs before the client stops

	// The organization's hookd application (UID = organization id) and its endpoint. With the
	// Standard Webhooks scheme the body is the payload alone, so the endpoint's path tells the
	// receiver the type: the endpoint takes invitation.created only.
	if _, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: orgID}); err != nil {
		return err
	}
	ep, err := client.CreateEndpoint(ctx, orgID, &hookd.EndpointIn{
		URL:        recv.url + "/webhooks/invitation.created",
		EventTypes: []string{"invitation.created"},
	})
	if err != nil {
		return err
	}
	secret, err := client.EndpointSecret(ctx, orgID, ep.ID)
	if err != nil {
		return err
	}
	if err := recv.setSecret(secret); err != nil {
		return err
	}
	fmt.Fprintf(out, "hookd: application %s with an endpoint for invitation.created\n", orgID)

	// The business write and its event, in one transaction of the app.
	inv := invitationCreated{InvitationID: "inv_1", OrganizationID: orgID, Email: "ada@example.com", InvitedAt: time.Now().UTC()}
	err = inTx(ctx, store.DB(), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO invitations (id, organization_id, email) VALUES (?, ?, ?)`,
			inv.InvitationID, inv.OrganizationID, inv.Email); err != nil {
			return err
		}
		return b.Publish(ctx, tx, bus.Event{Name: "tenancy.invitation.created", AggregateID: inv.InvitationID, Payload: inv})
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "app: committed invitation %s and tenancy.invitation.created in one transaction\n", inv.InvitationID)

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	select {
	case <-recv.verified:
	case <-wctx.Done():
		return errors.New("no verified invitation.created webhook within 10 s")
	}

	// An event without an organization: the fan-out skips it.
	err = inTx(ctx, store.DB(), func(tx *sql.Tx) error {
		return b.Publish(ctx, tx, bus.Event{Name: "iam.user.registered", AggregateID: "usr_1",
			Payload: userRegistered{UserID: "usr_1", Email: "ada@example.com"}})
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "app: committed iam.user.registered")
	select {
	case <-userDone:
	case <-wctx.Done():
		return errors.New("iam.user.registered was not dispatched within 10 s")
	}

	if n := recv.count(); n != 1 {
		return fmt.Errorf("the receiver got %d webhooks, want 1", n)
	}
	fmt.Fprintln(out, "done: 1 webhook delivered and verified")
	return nil
}

// inTx runs f in a transaction on db, committing when it returns nil.
func inTx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// stop calls stopFn with a bounded context, keeping its error in *err when there is none yet.
func stop(err *error, what string, stopFn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := stopFn(ctx); e != nil && *err == nil {
		*err = fmt.Errorf("stop %s: %w", what, e)
	}
}

// receiver is the customer's HTTP server on 127.0.0.1.
type receiver struct {
	url      string
	srv      *http.Server
	out      io.Writer
	verified chan struct{} // gets a value for each verified webhook

	mu  sync.Mutex
	wh  *standardwebhooks.Webhook
	got int
}

func newReceiver(out io.Writer) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), out: out, verified: make(chan struct{}, 16)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// setSecret sets the endpoint's whsec_ secret, which the webhooks are verified with.
func (r *receiver) setSecret(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.wh = wh
	r.mu.Unlock()
	return nil
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	wh := r.wh
	r.got++
	r.mu.Unlock()
	if wh == nil {
		http.Error(w, "no secret", http.StatusUnauthorized)
		return
	}
	if err := wh.Verify(body, req.Header); err != nil {
		fmt.Fprintf(r.out, "receiver: rejected %s: %v\n", req.URL.Path, err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	eventType := strings.TrimPrefix(req.URL.Path, "/webhooks/")
	var compact bytes.Buffer
	if json.Compact(&compact, body) != nil {
		compact.Reset()
		compact.Write(body)
	}
	fmt.Fprintf(r.out, "receiver: verified %s %s\n", eventType, compact.Bytes())
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"received":true}`)
	select {
	case r.verified <- struct{}{}:
	default:
	}
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

// syncWriter serializes writes from the receiver and the bus's handlers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
