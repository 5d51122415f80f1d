//go:build race

package main

// upgradeUnderRace is true under the race detector. TestUpgrade skips there: the binary it
// starts is built without -race, so a second run adds nothing that go test ./... has not run.
const upgradeUnderRace = true
