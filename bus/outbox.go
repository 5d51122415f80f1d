package bus

import (
	"context"
	"time"
)

// Status is where an event stands in the outbox.
type Status string

const (
	// StatusPending: the event waits for a dispatch, the first or a retry.
	StatusPending Status = "pending"
	// StatusFailed: every attempt failed; the event is dead-lettered until it is re-driven.
	StatusFailed Status = "failed"
)

// Record is an event as the outbox keeps it.
type Record struct {
	ID          string
	Name        string
	AggregateID string
	// Payload is the event's payload as JSON, as it was marshalled at Publish.
	Payload     []byte
	OccurredAt  time.Time
	Status      Status
	Attempts    int // attempts claimed so far
	NextAttempt time.Time
	LastError   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Settlement is what became of one claimed attempt of an event.
type Settlement struct {
	ID string
	// Attempts is the event's count of attempts after the claim: the settlement applies only while
	// the event is still at it.
	Attempts int
	// Done deletes the event: every handler succeeded.
	Done bool
	// Otherwise the event gets Status (pending or failed), NextAttempt and LastError.
	Status      Status
	NextAttempt time.Time
	LastError   string
	At          time.Time
}

// Outbox is where a Bus keeps its events: a table of the hookd store's database (the sqlite and
// postgres stores implement it). Times are kept to the microsecond.
type Outbox interface {
	// InsertEvents writes events, pending and due at their NextAttempt, in tx: the app's
	// transaction on the store's database (*sql.Tx; on PostgreSQL also pgx.Tx) or a hookd.Tx of
	// the store. Any other transaction gives an error wrapping hookd.ErrUnsupportedTx.
	InsertEvents(ctx context.Context, tx any, events []Record) error
	// DueEvents returns up to limit pending events due at or before now, the earliest first.
	DueEvents(ctx context.Context, now time.Time, limit int) ([]Record, error)
	// EventsByID returns the events of ids that exist (committed), in any order.
	EventsByID(ctx context.Context, ids []string) ([]Record, error)
	// ClaimEvent takes attempt attempts+1 of a pending event whose count of attempts is still
	// attempts, and makes it due again at leaseUntil (when the claimer has not settled it by
	// then, it is another's to try). It reports whether this call took it.
	ClaimEvent(ctx context.Context, id string, attempts int, leaseUntil, at time.Time) (bool, error)
	// SettleEvent writes the outcome of a claimed attempt, if the event is still at it.
	SettleEvent(ctx context.Context, s Settlement) error
	// ListEvents returns up to limit events in status, in id order after the id after ("": from
	// the first).
	ListEvents(ctx context.Context, status Status, after string, limit int) ([]Record, error)
	// RedriveEvent makes a failed event pending again, due at now, with its attempts counted
	// from zero. A missing or pending event is hookd.ErrNotFound.
	RedriveEvent(ctx context.Context, id string, now time.Time) error
}
