//go:build race

package sqlite_test

// raceEnabled: the race detector instruments modernc's pure-Go SQLite too, which slows every
// query several times over, so timing bounds are loosened.
const raceEnabled = true
