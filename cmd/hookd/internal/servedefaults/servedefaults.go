// Package servedefaults holds the settings "hookd serve" starts with that the bench's api target
// starts with too: the HTTP server's limits, the request body's overhead and the worker lanes.
package servedefaults

import (
	"net/http"
	"runtime"
	"time"

	"github.com/hookd/hookd"
)

// Limits of the HTTP server.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 60 * time.Second // a body of --max-payload on a slow link
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 64 << 10
	MaxBodyOverhead   = 64 << 10 // a message's envelope around its payload
)

// NewHTTPServer returns an http.Server for h with the limits above.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// DefaultWorkers sizes the first lane to the machine: 50 per CPU, at most 400.
func DefaultWorkers() int { return min(50*runtime.NumCPU(), 400) }

// Lanes splits n into the lanes: n first attempts, n/2 retries, n/10 manual, at least 1 each.
func Lanes(n int) map[hookd.Lane]int {
	return map[hookd.Lane]int{hookd.LaneFirst: n, hookd.LaneRetry: max(n/2, 1), hookd.LaneManual: max(n/10, 1)}
}
