// Package slottest is the behaviour every hookd.SlotLeaser shows, run by the PostgreSQL store's
// tests and the Redis queue's against the real service: the holders' slots never add up to more
// than the capacity, however many ask at once; a lease renewed lives on and one left to end is
// taken over; a release gives back; a capacity lowered below what is held grants nothing more;
// the contenders (holding or wanting) are counted by acquisitions and renewals, and a want ends
// with its short lease or a release.
package slottest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// Run runs every check on leaser. Each check uses endpoint ids of its own.
func Run(t *testing.T, leaser hookd.SlotLeaser) {
	t.Run("NeverAboveCapacity", func(t *testing.T) { neverAboveCapacity(t, leaser) })
	t.Run("LeaseEndsAndRenews", func(t *testing.T) { leaseEndsAndRenews(t, leaser) })
	t.Run("ReleaseGivesBack", func(t *testing.T) { releaseGivesBack(t, leaser) })
	t.Run("LoweredCapacity", func(t *testing.T) { loweredCapacity(t, leaser) })
	t.Run("ContendersCounted", func(t *testing.T) { contendersCounted(t, leaser) })
	t.Run("WantsExpire", func(t *testing.T) { wantsExpire(t, leaser) })
}

func acquire(t *testing.T, l hookd.SlotLeaser, holder, ep string, held, want, capacity int, lease time.Duration) int {
	t.Helper()
	n, _, err := l.AcquireSlots(t.Context(), holder, ep, held, want, capacity, lease)
	if err != nil {
		t.Fatalf("AcquireSlots(%s, %s, held %d, want %d, capacity %d): %v", holder, ep, held, want, capacity, err)
	}
	return n
}

// neverAboveCapacity: holders acquiring and releasing at once, each keeping its own count as a
// process does, never hold more than the capacity together, and reach it.
func neverAboveCapacity(t *testing.T, l hookd.SlotLeaser) {
	const capacity, holders, rounds = 5, 4, 60
	ep := fmt.Sprintf("ep_cap_%d", time.Now().UnixNano())
	var total, most atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, holders)
	for h := range holders {
		wg.Go(func() {
			holder := fmt.Sprintf("holder_%d", h)
			held := 0
			for i := range rounds {
				ctx := context.Background()
				if i%3 != 2 {
					n, _, err := l.AcquireSlots(ctx, holder, ep, held, 2, capacity, time.Minute)
					if err != nil {
						errs <- err
						return
					}
					held += n
					now := total.Add(int64(n))
					for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
					}
					continue
				}
				// Count the slots given back before the leaser does, as a process does.
				keep := held / 2
				total.Add(int64(keep - held))
				if err := l.ReleaseSlots(ctx, holder, ep, keep); err != nil {
					errs <- err
					return
				}
				held = keep
			}
			total.Add(int64(-held))
			if err := l.ReleaseSlots(context.Background(), holder, ep, 0); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := most.Load(); m > capacity {
		t.Fatalf("the holders held %d slots at once, above the capacity %d", m, capacity)
	} else if m < capacity {
		t.Errorf("the holders held at most %d slots at once; they never reached the capacity %d", m, capacity)
	}
	if n := acquire(t, l, "after", ep, 0, capacity, capacity, time.Minute); n != capacity {
		t.Errorf("after every holder gave its slots back, %d of %d granted", n, capacity)
	}
}

// leaseEndsAndRenews: a lease renewed outlives its first end; one left alone ends, and another
// holder takes its slots.
func leaseEndsAndRenews(t *testing.T, l hookd.SlotLeaser) {
	ctx := t.Context()
	renewedEp := fmt.Sprintf("ep_renew_%d", time.Now().UnixNano())
	endedEp := fmt.Sprintf("ep_end_%d", time.Now().UnixNano())
	const lease = 1500 * time.Millisecond
	if n := acquire(t, l, "a", renewedEp, 0, 3, 3, lease); n != 3 {
		t.Fatalf("a granted %d of 3", n)
	}
	if n := acquire(t, l, "a", endedEp, 0, 3, 3, lease); n != 3 {
		t.Fatalf("a granted %d of 3", n)
	}
	if n := acquire(t, l, "b", endedEp, 0, 1, 3, lease); n != 0 {
		t.Fatalf("b granted %d while a holds the whole capacity", n)
	}
	deadline := time.Now().Add(2 * lease)
	for time.Now().Before(deadline) {
		got, err := l.RenewSlots(ctx, "a", []string{renewedEp, "ep_never_held"}, lease)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(slices.Collect(maps.Keys(got)), []string{renewedEp}) {
			t.Fatalf("RenewSlots renewed %v, want [%s]", got, renewedEp)
		}
		time.Sleep(lease / 5)
	}
	if n := acquire(t, l, "b", renewedEp, 0, 1, 3, lease); n != 0 {
		t.Errorf("b granted %d of a's renewed slots", n)
	}
	if n := acquire(t, l, "b", endedEp, 0, 3, 3, lease); n != 3 {
		t.Errorf("b granted %d of 3 after a's lease ended, want 3", n)
	}
	got, err := l.RenewSlots(ctx, "a", []string{endedEp}, lease)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("RenewSlots renewed a's ended lease: %v", got)
	}
}

// releaseGivesBack: a release down to keep frees the rest for another holder, and to zero frees
// them all.
func releaseGivesBack(t *testing.T, l hookd.SlotLeaser) {
	ctx := t.Context()
	ep := fmt.Sprintf("ep_release_%d", time.Now().UnixNano())
	if n := acquire(t, l, "a", ep, 0, 4, 4, time.Minute); n != 4 {
		t.Fatalf("a granted %d of 4", n)
	}
	if err := l.ReleaseSlots(ctx, "a", ep, 1); err != nil {
		t.Fatal(err)
	}
	if n := acquire(t, l, "b", ep, 0, 4, 4, time.Minute); n != 3 {
		t.Errorf("b granted %d after a kept 1 of 4, want 3", n)
	}
	if err := l.ReleaseSlots(ctx, "a", ep, 0); err != nil {
		t.Fatal(err)
	}
	if n := acquire(t, l, "b", ep, 3, 4, 4, time.Minute); n != 1 {
		t.Errorf("b granted %d more after a gave back all, want 1", n)
	}
	// A release never raises a count, and one of a holder holding none changes nothing.
	if err := l.ReleaseSlots(ctx, "c", ep, 2); err != nil {
		t.Fatal(err)
	}
	if n := acquire(t, l, "d", ep, 0, 1, 4, time.Minute); n != 0 {
		t.Errorf("d granted %d with b holding the capacity", n)
	}
}

// loweredCapacity: with the capacity lowered below what is held, no holder is granted more,
// and the holder's own count stays as it is.
func loweredCapacity(t *testing.T, l hookd.SlotLeaser) {
	ep := fmt.Sprintf("ep_lower_%d", time.Now().UnixNano())
	if n := acquire(t, l, "a", ep, 0, 6, 8, time.Minute); n != 6 {
		t.Fatalf("a granted %d of 6", n)
	}
	if n := acquire(t, l, "b", ep, 0, 2, 4, time.Minute); n != 0 {
		t.Errorf("b granted %d with the capacity lowered to 4 and a holding 6", n)
	}
	if n := acquire(t, l, "a", ep, 6, 2, 4, time.Minute); n != 0 {
		t.Errorf("a granted %d more with the capacity lowered to 4 and a holding 6", n)
	}
	if err := l.ReleaseSlots(t.Context(), "a", ep, 3); err != nil {
		t.Fatal(err)
	}
	if n := acquire(t, l, "b", ep, 0, 2, 4, time.Minute); n != 1 {
		t.Errorf("b granted %d after a kept 3 of capacity 4, want 1", n)
	}
}

// acquireCounted is acquire that returns the contenders too.
func acquireCounted(t *testing.T, l hookd.SlotLeaser, holder, ep string, held, want, capacity int, lease time.Duration) (granted, contenders int) {
	t.Helper()
	n, c, err := l.AcquireSlots(t.Context(), holder, ep, held, want, capacity, lease)
	if err != nil {
		t.Fatalf("AcquireSlots(%s, %s, held %d, want %d, capacity %d): %v", holder, ep, held, want, capacity, err)
	}
	return n, c
}

// contendersCounted: an acquisition counts the live holders, the one asking among them and a
// holder refused every slot too (its want); a renewal counts them for each endpoint renewed; a
// release to none ends a holder's part.
func contendersCounted(t *testing.T, l hookd.SlotLeaser) {
	ctx := t.Context()
	ep := fmt.Sprintf("ep_contend_%d", time.Now().UnixNano())
	other := fmt.Sprintf("ep_contend_other_%d", time.Now().UnixNano())
	if n, c := acquireCounted(t, l, "a", ep, 0, 8, 8, time.Minute); n != 8 || c != 1 {
		t.Fatalf("a alone: granted %d of 8 among %d contenders, want 8 among 1", n, c)
	}
	if n, c := acquireCounted(t, l, "b", ep, 0, 4, 8, time.Minute); n != 0 || c != 2 {
		t.Fatalf("b refused: granted %d among %d contenders, want 0 among 2 (a holding, b wanting)", n, c)
	}
	if n, c := acquireCounted(t, l, "a", other, 0, 1, 8, time.Minute); n != 1 || c != 1 {
		t.Fatalf("a on another endpoint: granted %d among %d contenders, want 1 among 1", n, c)
	}
	got, err := l.RenewSlots(ctx, "a", []string{ep, other}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{ep: 2, other: 1}; !maps.Equal(got, want) {
		t.Fatalf("RenewSlots: %v, want %v", got, want)
	}
	// b's want is no slot to renew.
	if got, err := l.RenewSlots(ctx, "b", []string{ep}, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("RenewSlots of b, which holds none: %v, %v; want nothing renewed", got, err)
	}
	if err := l.ReleaseSlots(ctx, "a", ep, 4); err != nil {
		t.Fatal(err)
	}
	if n, c := acquireCounted(t, l, "b", ep, 0, 4, 8, time.Minute); n != 4 || c != 2 {
		t.Fatalf("b after a kept 4: granted %d among %d contenders, want 4 among 2", n, c)
	}
	if n, c := acquireCounted(t, l, "c", ep, 0, 2, 8, time.Minute); n != 0 || c != 3 {
		t.Fatalf("c refused: granted %d among %d contenders, want 0 among 3", n, c)
	}
	for _, h := range []string{"b", "c"} {
		if err := l.ReleaseSlots(ctx, h, ep, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := l.RenewSlots(ctx, "a", []string{ep}, time.Minute); err != nil || got[ep] != 1 {
		t.Fatalf("RenewSlots of a after b and c gave back all: %v, %v; want %s among 1", got, err, ep)
	}
}

// wantsExpire: a refused holder's want counts among the contenders for SlotWantLease, not for
// the lease asked for, and then no more.
func wantsExpire(t *testing.T, l hookd.SlotLeaser) {
	ctx := t.Context()
	ep := fmt.Sprintf("ep_want_%d", time.Now().UnixNano())
	if n, _ := acquireCounted(t, l, "a", ep, 0, 2, 2, time.Minute); n != 2 {
		t.Fatalf("a granted %d of 2", n)
	}
	asked := time.Now()
	if n, c := acquireCounted(t, l, "b", ep, 0, 1, 2, time.Minute); n != 0 || c != 2 {
		t.Fatalf("b refused: granted %d among %d contenders, want 0 among 2", n, c)
	}
	got, err := l.RenewSlots(ctx, "a", []string{ep}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(asked) < hookd.SlotWantLease && got[ep] != 2 {
		t.Fatalf("RenewSlots within b's want lease: %v, want %s among 2", got, ep)
	}
	time.Sleep(time.Until(asked.Add(hookd.SlotWantLease + 200*time.Millisecond)))
	got, err = l.RenewSlots(ctx, "a", []string{ep}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got[ep] != 1 {
		t.Fatalf("RenewSlots past b's want lease: %v, want %s among 1 (b's want ended)", got, ep)
	}
}
