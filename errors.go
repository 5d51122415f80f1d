package hookd

import "errors"

// Errors a caller can branch on with errors.Is.
var (
	// ErrNotFound: no such application, endpoint, event type, message, delivery or attempt.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique key is taken (an application uid, an endpoint uid).
	ErrConflict = errors.New("conflict")
	// ErrUnsupportedTx: SendTx was given a transaction type the store cannot use.
	ErrUnsupportedTx = errors.New("unsupported transaction type")
	// ErrInvalid: an input failed validation; the error names the field. See *ValidationError.
	ErrInvalid = errors.New("invalid input")
	// ErrPayloadTooLarge: a message payload is over Config.MaxPayload (also ErrInvalid).
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrStopped: the client is not running.
	ErrStopped = errors.New("client not started")
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
