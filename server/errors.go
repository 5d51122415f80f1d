package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/hookd/hookd"
)

// apiError is an error with its HTTP status and Svix's {"code", "detail"} body.
type apiError struct {
	Status int
	Code   string
	Detail string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail) }

var (
	errUnauthorized = &apiError{http.StatusUnauthorized, "authentication_failed", "Invalid or missing Authorization bearer token."}
	errForbidden    = &apiError{http.StatusForbidden, "insufficient_access", "This token may not access that application."}
	errInternal     = &apiError{http.StatusInternalServerError, "internal_error", "Internal error; the server log has the details."}
	errMissingAuth  = errors.New("server: Config.Auth is required")
)

func notFound(what string) error {
	return &apiError{http.StatusNotFound, "not_found", what + " not found"}
}

func conflict(detail string) error {
	return &apiError{http.StatusConflict, "conflict", detail}
}

func badRequest(code, detail string) error {
	return &apiError{http.StatusBadRequest, code, detail}
}

// fieldError is one entry of Svix's HTTPValidationError (422).
type fieldError struct {
	Loc  []string `json:"loc"`
	Msg  string   `json:"msg"`
	Type string   `json:"type"`
}

// validationError is a 422 naming the fields at fault.
type validationError struct{ Detail []fieldError }

func (e *validationError) Error() string {
	if len(e.Detail) == 0 {
		return "validation error"
	}
	return fmt.Sprintf("invalid %v: %s", e.Detail[0].Loc, e.Detail[0].Msg)
}

// invalidField returns a 422 for one field; where is "body", "query" or "path".
func invalidField(where, field, msg string) error {
	return &validationError{Detail: []fieldError{{Loc: []string{where, field}, Msg: msg, Type: "value_error"}}}
}

// isInternal reports whether err is a server fault (logged, 500) rather than the caller's.
func isInternal(err error) bool {
	var ae *apiError
	var ve *validationError
	var he *hookd.ValidationError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae.Status >= 500
	case errors.As(err, &ve), errors.As(err, &he), errors.As(err, &mb),
		errors.Is(err, hookd.ErrNotFound), errors.Is(err, hookd.ErrConflict),
		errors.Is(err, hookd.ErrEndpointDisabled), errors.Is(err, hookd.ErrTooManyEndpoints),
		errors.Is(err, hookd.ErrRateLimited):
		return false
	}
	return true
}

// writeError writes err as JSON with its status. hookd's errors map to Svix's: ErrNotFound 404,
// ErrConflict 409, *hookd.ValidationError 422 naming the field, a body over the limit 413. The
// quotas: ErrTooManyEndpoints 422 (the body at fault, as Svix reports a refused input), a
// *hookd.RateLimitError 429 with Retry-After in whole seconds. Anything else is a 500 with no
// detail (the handler logged it).
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	var ve *validationError
	var he *hookd.ValidationError
	var mb *http.MaxBytesError
	var rl *hookd.RateLimitError
	var el *hookd.EndpointLimitError
	switch {
	case errors.As(err, &rl):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(rl.RetryAfter.Seconds()))))
		writeJSON(w, http.StatusTooManyRequests, &apiError{Code: "too_many_requests",
			Detail: fmt.Sprintf("This application creates more than %g messages per second; nothing was written. Retry after the Retry-After header's seconds.", rl.Rate)})
	case errors.As(err, &el):
		msg := fmt.Sprintf("The application has %d endpoints, the most it may have (hookd serve --max-endpoints-per-app); delete one first.", el.Max)
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []fieldError{{Loc: []string{"body"}, Msg: msg, Type: "value_error"}}})
	case errors.Is(err, hookd.ErrPayloadTooLarge) && errors.As(err, &he):
		writeJSON(w, http.StatusRequestEntityTooLarge, &apiError{Code: "payload_too_large", Detail: "The payload is " + he.Reason + " bytes."})
	case errors.As(err, &ve):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": ve.Detail})
	case errors.As(err, &he):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []fieldError{{Loc: []string{"body", he.Field}, Msg: he.Reason, Type: "value_error"}}})
	case errors.As(err, &mb):
		writeJSON(w, http.StatusRequestEntityTooLarge, &apiError{Code: "payload_too_large", Detail: fmt.Sprintf("The request body is larger than %d bytes.", mb.Limit)})
	case errors.As(err, &ae):
		writeJSON(w, ae.Status, ae)
	case errors.Is(err, hookd.ErrNotFound):
		writeJSON(w, http.StatusNotFound, &apiError{Code: "not_found", Detail: "Entity not found"})
	case errors.Is(err, hookd.ErrConflict):
		writeJSON(w, http.StatusConflict, &apiError{Code: "conflict", Detail: "An entity with this uid already exists."})
	case errors.Is(err, hookd.ErrEndpointDisabled):
		writeJSON(w, http.StatusConflict, &apiError{Code: "endpoint_disabled", Detail: err.Error()})
	case errors.Is(err, hookd.ErrUnavailable):
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, &apiError{Code: "service_unavailable", Detail: "The database is unavailable; nothing was written. Try again."})
	case errors.Is(err, hookd.ErrWriterBusy):
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, &apiError{Code: "service_unavailable", Detail: "The database was busy until the request's deadline; nothing was written. Try again."})
	default:
		writeJSON(w, errInternal.Status, errInternal)
	}
}

// MarshalJSON writes Svix's error body.
func (e *apiError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}{e.Code, e.Detail})
}

// writeJSON writes v with status and Content-Type application/json.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
