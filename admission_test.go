package hookd

import (
	"testing"
	"time"
)

// TestSlotLine tests the line of jobs waiting for a capped endpoint's slot: first come, first
// served; a first try does not overtake those in line; a freed slot is kept for the one it woke;
// one that leaves the line after being woken passes the slot on; a slow endpoint has no line.
func TestSlotLine(t *testing.T) {
	s := newEndpointStates(circuitConfig{threshold: -1})
	lim := isolation{maxInFlight: 2, timeout: time.Second}
	now := time.Unix(1000, 0)
	at := func(ms int) time.Time { return now.Add(time.Duration(ms) * time.Millisecond) }
	woken := func(w *slotWaiter) bool {
		select {
		case <-w.ch:
			return true
		default:
			return false
		}
	}

	// Before any attempt has ended the endpoint's speed is unknown: refused jobs snooze.
	a1, a2 := s.admit("ep", lim, at(0), 0, nil), s.admit("ep", lim, at(1), 0, nil)
	if a1.wait != 0 || a2.wait != 0 {
		t.Fatal("the first two attempts were refused")
	}
	if r := s.admit("ep", lim, at(2), 0, nil); r.wait == 0 || r.waiter != nil {
		t.Fatalf("at the cap with no attempt ended: %+v, want a snooze without a line", r)
	}
	s.release("ep", attemptEnd{started: at(0), success: true, dur: 5 * time.Millisecond}, at(5))
	a3 := s.admit("ep", lim, at(5), 0, nil)
	if a3.wait != 0 {
		t.Fatal("a freed slot was not taken")
	}

	// The endpoint is fast now: refused jobs wait in line, in order.
	w1 := s.admit("ep", lim, at(6), 0, nil)
	w2 := s.admit("ep", lim, at(7), 0, nil)
	if w1.waiter == nil || w2.waiter == nil {
		t.Fatalf("refused at the cap of a fast endpoint without a place in line: %+v %+v", w1, w2)
	}
	s.release("ep", attemptEnd{started: at(1), success: true, dur: 5 * time.Millisecond}, at(8))
	if !woken(w1.waiter) || woken(w2.waiter) {
		t.Fatal("a freed slot did not wake the first in line alone")
	}
	// A first try does not take the slot kept for the woken one.
	if r := s.admit("ep", lim, at(9), 0, nil); r.wait == 0 {
		t.Fatal("a first try overtook the line")
	} else {
		s.leaveLine("ep", r.waiter)
	}
	if r := s.admit("ep", lim, at(9), 0, w1.waiter); r.wait != 0 {
		t.Fatalf("the woken job was refused its slot: %+v", r)
	}
	// The second leaves after being woken without taking its slot: the slot is not lost.
	s.release("ep", attemptEnd{started: at(5), success: true, dur: 5 * time.Millisecond}, at(10))
	if !woken(w2.waiter) {
		t.Fatal("the second in line was not woken")
	}
	w3 := s.admit("ep", lim, at(11), 0, nil)
	if w3.waiter == nil {
		t.Fatalf("a new job did not queue behind the woken one: %+v", w3)
	}
	s.leaveLine("ep", w2.waiter)
	if !woken(w3.waiter) {
		t.Fatal("the slot of a woken job that left was not passed on")
	}
	if r := s.admit("ep", lim, at(12), 0, w3.waiter); r.wait != 0 {
		t.Fatalf("the job the slot was passed to was refused: %+v", r)
	}

	// A slow endpoint: refused jobs snooze, no line.
	slow := newEndpointStates(circuitConfig{threshold: -1})
	slow.admit("slow", lim, at(0), 0, nil)
	slow.admit("slow", lim, at(0), 0, nil)
	slow.release("slow", attemptEnd{started: at(0), success: true, dur: 2 * capWait}, at(100))
	slow.admit("slow", lim, at(100), 0, nil)
	if r := slow.admit("slow", lim, at(101), 0, nil); r.wait == 0 || r.waiter != nil {
		t.Fatalf("a slow endpoint at its cap: %+v, want a snooze without a line", r)
	}
}
