// Package route carries the ServeMux pattern a request matched out to the middleware around the
// mux: the mux sets Request.Pattern only on the request it hands the matched handler, so the
// handler notes it in a holder the middleware put in the request's context.
package route

import (
	"context"
	"net/http"
)

// Holder receives the pattern of the route that matched; empty when none did.
type Holder struct{ Pattern string }

type holderKey struct{}

// WithHolder returns r with a new Holder in its context, and the Holder.
func WithHolder(r *http.Request) (*http.Request, *Holder) {
	h := &Holder{}
	return r.WithContext(context.WithValue(r.Context(), holderKey{}, h)), h
}

// Note records r.Pattern in the Holder of r's context, if it has one. A matched handler calls it.
func Note(r *http.Request) {
	if h, ok := r.Context().Value(holderKey{}).(*Holder); ok {
		h.Pattern = r.Pattern
	}
}
