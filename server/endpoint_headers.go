package server

import (
	"fmt"
	"strings"
)

// The rules for the headers an endpoint adds to its requests. The names Svix's server refuses are
// refused with its messages; so are the headers hookd sets itself (framing, signatures). Names are
// HTTP tokens; values have no control characters. The headers whose values the API never shows
// are those hookd.SensitiveHeader names (the client stores their values sealed).
var (
	// forbiddenEndpointHeaders are the names no endpoint may set, in lower case.
	forbiddenEndpointHeaders = map[string]bool{
		// Svix's server refuses these.
		"user-agent": true, "keep-alive": true, "proxy-authenticate": true, "proxy-authorization": true,
		"te": true, "trailers": true, "transfer-encoding": true, "upgrade": true, "age": true,
		"cache-control": true, "clear-site-data": true, "expires": true, "pragma": true, "warning": true,
		"content-length": true, "content-type": true, "content-encoding": true, "content-language": true,
		"content-location": true,
		// hookd's request framing.
		"host": true, "connection": true, "trailer": true, "expect": true, "proxy-connection": true,
	}
	// forbiddenEndpointHeaderPrefixes are the prefixes no endpoint header may start with: Svix's
	// (cloud providers' own headers, Svix's signatures) and hookd's signature headers.
	forbiddenEndpointHeaderPrefixes = []string{
		"x-amz-", "x-amzn-", "x-google", "x-goog-", "x-gfe", "x-azure-", "x-fd-", "x-svix-", "svix-",
		"webhook-", "x-webhook-",
	}
)

const (
	maxEndpointHeaders   = 64
	maxEndpointHeaderLen = 4096
)

// checkEndpointHeaders checks headers to be set on an endpoint (field names the body field).
func checkEndpointHeaders(h map[string]string, field string) error {
	if len(h) > maxEndpointHeaders {
		return invalidField("body", field, fmt.Sprintf("%d headers, at most %d", len(h), maxEndpointHeaders))
	}
	seen := make(map[string]bool, len(h))
	for k, v := range h {
		if err := checkEndpointHeaderName(k, field); err != nil {
			return err
		}
		lk := strings.ToLower(k)
		if seen[lk] {
			return invalidField("body", field, fmt.Sprintf("header %q is given twice", k))
		}
		seen[lk] = true
		if err := checkEndpointHeaderValue(v, field); err != nil {
			return err
		}
	}
	return nil
}

// checkEndpointHeaderName checks the name of a header to be set, with Svix's messages.
func checkEndpointHeaderName(k, field string) error {
	if !isHeaderToken(k) {
		return invalidField("body", field, "Invalid Header Name.")
	}
	lk := strings.ToLower(k)
	if forbiddenEndpointHeaders[lk] {
		return invalidField("body", field, "Header uses a forbidden key.")
	}
	for _, p := range forbiddenEndpointHeaderPrefixes {
		if strings.HasPrefix(lk, p) {
			return invalidField("body", field, "Header starts with a forbidden prefix.")
		}
	}
	return nil
}

// isHeaderToken reports whether k is a header name: 1 to 256 characters of RFC 9110's token.
func isHeaderToken(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// checkEndpointHeaderValue checks the value of a header to be set, with Svix's messages.
func checkEndpointHeaderValue(v, field string) error {
	if len(v) > maxEndpointHeaderLen {
		return invalidField("body", field, "Maximum header length is 4096 bytes")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return invalidField("body", field, "Invalid Header Value.")
		}
	}
	return nil
}

// endpointHeaderKey returns the key of h that names the header k (names are case-insensitive).
func endpointHeaderKey(h map[string]string, k string) (string, bool) {
	for existing := range h {
		if strings.EqualFold(existing, k) {
			return existing, true
		}
	}
	return "", false
}
