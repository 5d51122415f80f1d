package hookd

import (
	"testing"
	"time"
)

// newID returns an id made now from the process's source, as a Client on the real clock makes it.
func newID(prefix string) string {
	hi, lo := ids.next(uint64(time.Now().UnixMilli()))
	return encodeID(prefix, hi, lo)
}

// An attempt id made at or after t sorts at or after AttemptIDFloor(t); one made a millisecond
// before does not: a range of ids stands for a range of creation times.
func TestAttemptIDFloor(t *testing.T) {
	before := newID(prefixAttempt)
	time.Sleep(2 * time.Millisecond)
	at := time.Now()
	after := newID(prefixAttempt)
	floor := AttemptIDFloor(at)
	if !(before < floor && floor <= after) {
		t.Fatalf("before %s, floor %s, after %s: want before < floor <= after", before, floor, after)
	}
	if len(floor) != len(after) {
		t.Fatalf("floor %q is not an id's width", floor)
	}
}
