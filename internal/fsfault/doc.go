// Package fsfault breaks and mends the file system under a test, for real: a tmpfs filled to the
// last byte, a path made read-only, a file made immutable under a process that holds it open. It
// serves the outage tests of the sqlite package and of hookd serve. Each helper skips the test
// where this machine does not allow it (most need root); all but CheckHolds are Linux only.
package fsfault
