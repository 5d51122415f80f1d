package hookd

import (
	"errors"
	"fmt"
)

// Errors a caller can branch on with errors.Is.
var (
	// ErrNotFound: no such application, endpoint, event type, message, delivery or attempt.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique key is taken (an application uid, an endpoint uid). The stores of this
	// module return it as a *ConflictError naming the key.
	ErrConflict = errors.New("conflict")
	// ErrUnsupportedTx: SendTx was given a transaction the store cannot use: of a type it does
	// not take, or (SQLite) a *sql.Tx of another database; begin it on the store's DB().
	ErrUnsupportedTx = errors.New("unsupported transaction type")
	// ErrInvalid: an input failed validation; the error names the field. See *ValidationError.
	ErrInvalid = errors.New("invalid input")
	// ErrPayloadTooLarge: a message payload is over Config.MaxPayload (also ErrInvalid).
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrStopped: the client is not running.
	ErrStopped = errors.New("client not started")
	// ErrWriterBusy: the call's context ended while it waited to begin writing, and nothing was
	// written. On SQLite, whose store writes through one connection, the likely cause is a
	// transaction the app holds open on the same store (store.DB()) while it calls the client
	// from another: send inside that transaction with SendTx, or commit it first. The error also
	// wraps the context's (context.DeadlineExceeded).
	ErrWriterBusy = errors.New("store's write connection busy")
	// ErrUnavailable: the store's database cannot be reached (down, restarting, the connection
	// lost), or its files cannot be written (SQLite: the disk full, an I/O error, the file made
	// read-only). Nothing was written; the same call may succeed later. The API answers 503.
	ErrUnavailable = errors.New("database unavailable")
)

// ValidationError names the field of an input that is wrong and why.
type ValidationError struct {
	Field  string // e.g. "url", "eventType", "uid"
	Reason string
	kind   error // a more precise sentinel, e.g. ErrPayloadTooLarge; may be nil
}

func (e *ValidationError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalid, and the more precise sentinel when there is one
// (ErrPayloadTooLarge).
func (e *ValidationError) Unwrap() []error {
	if e.kind != nil {
		return []error{ErrInvalid, e.kind}
	}
	return []error{ErrInvalid}
}

// ConflictError is ErrConflict naming what is taken: the entity, the field of its unique key and
// the value, e.g. application uid "acme". errors.Is(err, ErrConflict) holds for it.
type ConflictError struct {
	Entity string // "application", "endpoint"
	Field  string // "uid", or "id"
	Value  string
	Err    error // the store's own error; may be nil
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s %q is taken", e.Entity, e.Field, e.Value)
}

// Unwrap returns ErrConflict, and the store's error when there is one.
func (e *ConflictError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConflict, e.Err}
	}
	return []error{ErrConflict}
}

func invalid(field, reason string) error { return &ValidationError{Field: field, Reason: reason} }

// ErrEndpointDisabled: a manual attempt was asked of a disabled endpoint.
var ErrEndpointDisabled = errors.New("endpoint disabled")

// ErrPayloadMissing: a manual attempt was asked of a message whose payload expired or was
// expunged.
var ErrPayloadMissing = errors.New("message payload missing (expired or expunged)")

// ErrIncompatibleSchema: the database's schema is not one this build of hookd may use, and the
// store refuses to open it rather than run on it: the database records a migration this build
// does not know (a later release applied it), or one whose name or text differs from this
// build's, or a migration missing from it failed to apply. The error names the migration and
// the fix; nothing was changed.
var ErrIncompatibleSchema = errors.New("incompatible database schema")
