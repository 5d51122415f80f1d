//go:build !race

package postgres_test

// raceEnabled is true under the race detector, which slows River's fetch loops and hookd's
// workers several times over: the queue suite's timing bounds are scaled by raceTiming.
const raceEnabled = false
