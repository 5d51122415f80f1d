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
	var stack [MaxHeaderFields]string
	names := stack[:0]
	total := 0
	for k, vs := range h {
		names = append(names, k)
		total += len(vs)
	}
	slices.Sort(names)
	// The values kept share one array, each name's a full slice of it (so that appending to one
	// never writes over the next).
	vals := make([]string, 0, min(total, MaxHeaderFields))
	out := make(http.Header, min(len(h), MaxHeaderFields))
	size, omitted := 0, 0
	for _, k := range names {
		start := len(vals)
		for _, v := range h[k] {
			if len(vals) == MaxHeaderFields || size+len(k)+len(v) > MaxHeaderBytes {
				omitted++
				continue
			}
			vals = append(vals, v)
			size += len(k) + len(v)
		}
		if len(vals) > start {
			out[k] = vals[start:len(vals):len(vals)]
		}
	}
	return out, omitted
}
