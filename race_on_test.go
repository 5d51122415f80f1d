//go:build race

package hookd_test

// raceEnabled is true under the race detector, which slows the pure-Go SQLite tenfold: tests keep
// their correctness checks there and skip their timing bounds.
const raceEnabled = true
