package hookd

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/hookd/hookd/delivery"
)

// AttemptHeaders is one side of an attempt's headers (the request's or the response's) as the
// attempt log keeps them: at most MaxAttemptHeaders values and MaxAttemptHeaderBytes bytes of
// names and values, in name order; Omitted counts the values left out. Stores keep it as JSON
// text (Encode, DecodeAttemptHeaders).
type AttemptHeaders struct {
	Header  http.Header `json:"header,omitempty"`
	Omitted int         `json:"omitted,omitempty"`
}

// Bounds of each side of an attempt's headers.
const (
	MaxAttemptHeaders     = delivery.MaxHeaderFields
	MaxAttemptHeaderBytes = delivery.MaxHeaderBytes
)

// Redacted stands in for the value of an endpoint's own header (Endpoint.Headers, which may carry
// credentials) in an attempt's request headers.
const Redacted = "[redacted]"

// Encode returns h as JSON text, or "" when it holds nothing.
func (h AttemptHeaders) Encode() string {
	if len(h.Header) == 0 && h.Omitted == 0 {
		return ""
	}
	b, _ := json.Marshal(h) // a map of string slices and an int always encode
	return string(b)
}

// DecodeAttemptHeaders reads what Encode wrote; "" is no headers.
func DecodeAttemptHeaders(s string) (AttemptHeaders, error) {
	var h AttemptHeaders
	if s == "" {
		return h, nil
	}
	if err := json.Unmarshal([]byte(s), &h); err != nil {
		return h, fmt.Errorf("attempt headers: %w", err)
	}
	return h, nil
}

// requestHeaders is the attempt log's copy of the headers an attempt sent: the signature headers
// in full, the values of the endpoint's own headers redacted, bounded as AttemptHeaders.
func requestHeaders(sent http.Header, ep *Endpoint) AttemptHeaders {
	if len(sent) == 0 {
		return AttemptHeaders{}
	}
	h := make(http.Header, len(sent))
	for k, vs := range sent {
		h[k] = vs
	}
	for k := range ep.Headers {
		ck := http.CanonicalHeaderKey(k)
		if vs, ok := h[ck]; ok {
			red := make([]string, len(vs))
			for i := range red {
				red[i] = Redacted
			}
			h[ck] = red
		}
	}
	out, omitted := delivery.BoundHeader(h)
	return AttemptHeaders{Header: out, Omitted: omitted}
}

// responseHeaders is the attempt log's copy of a response's headers, which package delivery
// bounds as AttemptHeaders are.
func responseHeaders(res *delivery.Result) AttemptHeaders {
	return AttemptHeaders{Header: res.Header, Omitted: res.HeaderOmitted}
}
