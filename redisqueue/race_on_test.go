//go:build race

package redisqueue_test

// raceEnabled: the race detector slows the SQLite store the suite enqueues through, and every
// goroutine hand-off, so the conformance suite's bounds are loosened (raceTiming).
const raceEnabled = true
