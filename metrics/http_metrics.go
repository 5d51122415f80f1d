package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hookd/hookd/internal/route"
)

// httpBuckets are the upper bounds of hookd_http_request_duration_seconds.
var httpBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// unmatched is the route label of a request no route matched.
const unmatched = "unmatched"

// Instrument counts the requests h answers in hookd_http_requests_total and times them in
// hookd_http_request_duration_seconds. The route label is the pattern the matched route of
// package server notes (internal/route); a request no route matches, or a handler that notes
// none, is "unmatched". The path never becomes a label: its ids would make the series unbounded.
func (m *Metrics) Instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, holder := route.WithHolder(r)
		sw := &statusWriter{ResponseWriter: w}
		began := time.Now()
		h.ServeHTTP(sw, r)
		pattern := holder.Pattern
		if pattern == "" {
			pattern = unmatched
		}
		method := methodLabel(r.Method)
		m.httpRequests.WithLabelValues(pattern, method, strconv.Itoa(sw.code())).Inc()
		m.httpDuration.WithLabelValues(pattern, method).Observe(time.Since(began).Seconds())
	})
}

// methodLabel is the method as a label: one of net/http's, or "other", so that a client's
// invented methods cannot add series.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// statusWriter remembers the status code of the response it passes on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 { // 1xx are interim responses
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes on to the underlying writer when it can flush.
func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the status sent, 200 when the handler wrote nothing (as net/http sends).
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
