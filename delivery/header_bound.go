package delivery

import (
	"net/http"
	"slices"
)

// Bounds of the response headers a Result keeps (Result.Header).
const (
	MaxHeaderFields = 32      // values
	MaxHeaderBytes  = 4 << 10 // names and values together
)

// BoundHeader returns the values of h in name order, each name with its values, while they fit
// in MaxHeaderFields values and MaxHeaderBytes bytes; a value that does not fit is left out and
// counted. A nil or empty h gives nil and 0.
func BoundHeader(h http.Header) (http.Header, int) {
	if len(h) == 0 {
		return nil, 0
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make(http.Header, min(len(h), MaxHeaderFields))
	fields, size, omitted := 0, 0, 0
	for _, k := range names {
		for _, v := range h[k] {
			if fields == MaxHeaderFields || size+len(k)+len(v) > MaxHeaderBytes {
				omitted++
				continue
			}
			out[k] = append(out[k], v)
			fields++
			size += len(k) + len(v)
		}
	}
	return out, omitted
}
