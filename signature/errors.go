package signature

import "errors"

// Errors returned by the signers and verifiers. Returned errors wrap these
// with detail; test them with [errors.Is].
var (
	// ErrMissingHeader means a required header is absent or empty.
	ErrMissingHeader = errors.New("missing header")
	// ErrMalformedHeader means a header cannot be parsed: a timestamp that is
	// not a base-10 integer, a message id or timestamp containing '.', a Stripe
	// header not of the form t=<unix>,v1=<hex>, or a header too long to check.
	ErrMalformedHeader = errors.New("malformed header")
	// ErrTooOld means the timestamp is further in the past than the tolerance.
	ErrTooOld = errors.New("timestamp too old")
	// ErrTooNew means the timestamp is further in the future than the tolerance.
	ErrTooNew = errors.New("timestamp too new")
	// ErrNoMatch means no signature in the header matches any key.
	ErrNoMatch = errors.New("no matching signature")
	// ErrInvalidSecret means a secret or key cannot be used. The returned error
	// says what is wrong with it (never the secret itself) and how to fix it.
	ErrInvalidSecret = errors.New("invalid secret")
	// ErrInvalidID means a message id to sign is empty or contains '.'.
	ErrInvalidID = errors.New("invalid message id")
)
