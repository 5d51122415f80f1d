package hookd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

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

// Encode returns h as JSON text, or "" when it holds nothing. The text is json.Marshal's, byte
// for byte (names in order, a nil list as null, the same escapes), written without reflection:
// every attempt record encodes two.
func (h AttemptHeaders) Encode() string {
	if len(h.Header) == 0 && h.Omitted == 0 {
		return ""
	}
	var stack [MaxAttemptHeaders]string
	names := stack[:0]
	size := len(`{"header":{},"omitted":-9223372036854775808}`)
	for k, vs := range h.Header {
		names = append(names, k)
		size += len(k) + len(`"":[],`)
		for _, v := range vs {
			size += len(v) + len(`"",`)
		}
	}
	slices.Sort(names)
	b := make([]byte, 0, size)
	b = append(b, '{')
	if len(h.Header) > 0 {
		b = append(b, `"header":{`...)
		for i, k := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			vs := h.Header[k]
			if vs == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '[')
			for j, v := range vs {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, v)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if h.Omitted != 0 {
		if len(h.Header) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"omitted":`...)
		b = strconv.AppendInt(b, int64(h.Omitted), 10)
	}
	b = append(b, '}')
	return string(b)
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it. A string of printable
// ASCII that needs no escape (header names and values nearly always are) is copied as it is; any
// other goes through json.Marshal, so that the escapes stay exactly its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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
	if !sentAny(sent, ep.Headers) {
		out, omitted := delivery.BoundHeader(sent) // which copies what it keeps
		return AttemptHeaders{Header: out, Omitted: omitted}
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

// sentAny reports whether sent holds any of the names of own.
func sentAny(sent http.Header, own map[string]string) bool {
	for k := range own {
		if _, ok := sent[http.CanonicalHeaderKey(k)]; ok {
			return true
		}
	}
	return false
}

// MaxResponseHeaderBytes bounds the names and values of a response's headers that an attempt
// keeps, beyond MaxAttemptHeaderBytes: the headers a receiver's own code sets (Content-Type,
// Retry-After, a request id) are short and fit many times over, while the ones that fill a
// response's header block (Content-Security-Policy, Set-Cookie, Report-To, Link) are long, of
// little use in finding why a delivery failed, and would otherwise be stored again with every
// attempt.
const MaxResponseHeaderBytes = 1 << 10

// responseHeaders is the attempt log's copy of a response's headers, which package delivery
// bounds as AttemptHeaders are, bounded further to MaxResponseHeaderBytes.
func responseHeaders(res *delivery.Result) AttemptHeaders {
	h, omitted := boundLongestFirst(res.Header, MaxResponseHeaderBytes)
	return AttemptHeaders{Header: h, Omitted: res.HeaderOmitted + omitted}
}

// boundLongestFirst returns h with the longest values (name and value together) left out, one
// by one, until the rest fit in limit bytes, and how many it left out; the values kept keep
// their order. h is returned as it is when it fits.
func boundLongestFirst(h http.Header, limit int) (http.Header, int) {
	type value struct {
		name string
		i    int
		size int
	}
	var all []value
	total := 0
	for k, vs := range h {
		for i, v := range vs {
			all = append(all, value{k, i, len(k) + len(v)})
			total += len(k) + len(v)
		}
	}
	if total <= limit {
		return h, 0
	}
	// Longest first; among equals, by name and place, so that the choice never depends on the
	// map's order.
	slices.SortFunc(all, func(a, b value) int {
		if a.size != b.size {
			return b.size - a.size
		}
		if a.name != b.name {
			return strings.Compare(a.name, b.name)
		}
		return a.i - b.i
	})
	drop := map[string][]bool{}
	omitted := 0
	for _, v := range all {
		if total <= limit {
			break
		}
		if drop[v.name] == nil {
			drop[v.name] = make([]bool, len(h[v.name]))
		}
		drop[v.name][v.i] = true
		total -= v.size
		omitted++
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		d := drop[k]
		if d == nil {
			out[k] = vs
			continue
		}
		var kept []string
		for i, v := range vs {
			if !d[i] {
				kept = append(kept, v)
			}
		}
		if kept != nil {
			out[k] = kept
		}
	}
	return out, omitted
}
