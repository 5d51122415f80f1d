//go:build race

package riverqueue_test

// raceEnabled: the race detector instruments modernc's pure-Go SQLite too, which slows every
// query several times over, so timing bounds are loosened (see lateBound).
const raceEnabled = true
