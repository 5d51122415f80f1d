package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// Event is a domain event to publish.
type Event struct {
	// Name is the event's internal name, e.g. "tenancy.invitation.created".
	Name string
	// AggregateID names what the event is about (an invitation's id); optional.
	AggregateID string
	// Payload is marshalled to JSON at Publish.
	Payload any
	// OccurredAt defaults to the bus's clock at Publish.
	OccurredAt time.Time
}

// maxPayload bounds one event's payload.
const maxPayload = 1 << 20

// Publish writes events to the outbox in tx, the caller's transaction: a *sql.Tx on the store's
// database (on PostgreSQL through pgx's database/sql driver), a pgx.Tx on PostgreSQL, or a
// hookd.Tx of the store. Nothing is dispatched unless tx commits. An event that cannot be
// written (a payload that is not JSON, a name that is empty) fails Publish before anything is
// written.
func (b *Bus) Publish(ctx context.Context, tx any, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	now := b.cfg.Now().UTC()
	recs := make([]Record, len(events))
	for i, e := range events {
		if e.Name == "" {
			return fmt.Errorf("bus: publish: event %d: %w", i, &hookd.ValidationError{Field: "Name", Reason: "is empty; name the event, e.g. tenancy.invitation.created"})
		}
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			return fmt.Errorf("bus: publish %s: %w", e.Name, &hookd.ValidationError{Field: "Payload", Reason: "does not marshal to JSON: " + err.Error()})
		}
		if len(payload) > maxPayload {
			return fmt.Errorf("bus: publish %s: %w", e.Name, &hookd.ValidationError{Field: "Payload", Reason: fmt.Sprintf("is %d bytes as JSON, at most %d", len(payload), maxPayload)})
		}
		occurred := e.OccurredAt
		if occurred.IsZero() {
			occurred = now
		}
		recs[i] = Record{ID: newEventID(), Name: e.Name, AggregateID: e.AggregateID, Payload: payload,
			OccurredAt: occurred.UTC(), Status: StatusPending, NextAttempt: now, CreatedAt: now, UpdatedAt: now}
	}
	if err := b.out.InsertEvents(ctx, tx, recs); err != nil {
		return fmt.Errorf("bus: publish: %w", err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	if ac, ok := tx.(hookd.AfterCommitter); ok && ac.AfterCommit(func() { b.watch.committed(ids) }) {
		return nil
	}
	b.watch.add(ids)
	return nil
}

func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}
