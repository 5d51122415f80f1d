package delivery

import (
	"net/http"
	"strconv"
	"time"
)

// Request is one webhook to send.
type Request struct {
	// URL is the endpoint. It must pass [ValidateURL].
	URL string
	// Header is added to the request. Content-Type defaults to
	// application/json and User-Agent to [Config.UserAgent] when absent.
	// A Host entry is ignored: the URL names the host.
	Header http.Header
	// Body is sent as is; nil sends an empty body.
	Body []byte
	// Timeout is this attempt's total time, when shorter than [Config.Timeout], which bounds it.
	// The attempt goes through the same transport (SSRF guard, kept-alive connections) either
	// way. Zero: [Config.Timeout].
	Timeout time.Duration
}

// Result is what one attempt produced. [Client.Post] never returns a nil
// Result.
type Result struct {
	// Outcome is what the attempt means for the delivery.
	Outcome Outcome
	// StatusCode is the response's status, 0 when no response arrived.
	StatusCode int
	// Body is the start of the response body, at most
	// [Config.MaxResponseBody] bytes; nil when empty. When the body could
	// not be read to the end (the attempt's time ran out, the connection
	// broke), Body holds what arrived and the status still counts.
	Body []byte
	// RetryAfter is the wait the receiver asked for in its Retry-After
	// header (seconds or HTTP-date), 0 when absent, unparsable or past.
	RetryAfter time.Duration
	// Duration is the time from the start of the attempt to the end of the
	// body read (or the failure).
	Duration time.Duration
	// Err is non-nil when no usable response arrived: a refused URL, a
	// refusal by the SSRF guard (ErrBlocked), a timeout
	// (context.DeadlineExceeded), a transport failure. Its text reads well
	// in an attempt log, and it wraps the cause.
	Err error
	// RequestHeader is the request's headers as they were sent (Content-Type
	// and User-Agent included); nil when no request was made.
	RequestHeader http.Header
	// Header is the response's headers, at most [MaxHeaderFields] values
	// and [MaxHeaderBytes] bytes of names and values, in name order, the
	// rest left out and counted in HeaderOmitted; nil when no response
	// arrived.
	Header        http.Header
	HeaderOmitted int
	// Location is the Location header of a 3xx response, never followed:
	// resolved against the request URL, cut to 300 bytes; "" when the
	// header is absent or unparsable, and for a response that is not 3xx.
	Location string
}

// Response is the response as an attempt log keeps it: the body that arrived, or, when no
// response arrived, why (the text of Err), as Svix stores a transport failure.
func (r *Result) Response() string {
	if r == nil {
		return ""
	}
	if r.Err != nil && r.StatusCode == 0 {
		return r.Err.Error()
	}
	return string(r.Body)
}

// Message describes the attempt for a human reading an attempt log: "" on
// success, "HTTP 503", "redirect to https://example.com/new not followed
// (HTTP 302)", or the transport failure ("no response within 15s",
// "connection refused", "blocked: 10.0.0.5 is a private address"...).
func (r *Result) Message() string {
	switch {
	case r == nil:
		return ""
	case r.Err != nil:
		return r.Err.Error()
	case r.Outcome == Success:
		return ""
	case r.Outcome == Redirect && r.Location != "":
		return "redirect to " + r.Location + " not followed (HTTP " + strconv.Itoa(r.StatusCode) + ")"
	case r.Outcome == Redirect:
		return "redirect not followed (HTTP " + strconv.Itoa(r.StatusCode) + ")"
	case r.StatusCode != 0:
		return "HTTP " + strconv.Itoa(r.StatusCode)
	}
	return ""
}
