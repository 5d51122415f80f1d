package hookd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/hookd/hookd/internal/outage"
)

// SlotLeaser shares each endpoint's cap of attempts in flight among the processes that work one
// installation's jobs. It is implemented by the PostgreSQL store and by the Redis queue; a Client
// uses its queue's when the queue is one, else its store's, else none (one process keeps the cap
// alone, as on SQLite).
//
// A process, the holder, takes slots of an endpoint in small batches and holds them for a lease;
// the slots of all live holders never add up to more than the capacity asked for. A holder that
// dies holds its slots until its lease ends; then they are anyone's.
//
// The leaser also counts each endpoint's contenders, the live holders that hold some of its
// slots or asked for some and were left with none, so that the processes can share the cap
// fairly: each keeps about capacity/contenders, and one alone takes it all.
type SlotLeaser interface {
	// AcquireSlots grants holder up to want slots of the endpoint beyond the held it counts as
	// its own, so that the slots of every holder whose lease has not ended stay within capacity;
	// it sets the holder's slots to held plus those granted, their lease ending lease from now
	// on the leaser's clock, and returns how many it granted (zero when the others hold the rest)
	// and the endpoint's contenders, holder among them. A holder left with no slots keeps a
	// want, which counts among the contenders for SlotWantLease (or lease when shorter).
	AcquireSlots(ctx context.Context, holder, endpointID string, held, want, capacity int, lease time.Duration) (granted, contenders int, err error)
	// RenewSlots sets the lease of holder's slots of each endpoint given to end lease from now,
	// in one round trip, and returns the endpoints whose slots it renewed, each with its
	// contenders: those missing had expired (and may be another's now) or held none.
	RenewSlots(ctx context.Context, holder string, endpointIDs []string, lease time.Duration) (renewed map[string]int, err error)
	// ReleaseSlots gives back all but keep of holder's slots of the endpoint.
	ReleaseSlots(ctx context.Context, holder, endpointID string, keep int) error
}

// Slot lease defaults and bounds (Config.SlotLease), and the lease of a want (SlotLeaser).
const (
	DefaultSlotLease = 10 * time.Second
	MinSlotLease     = time.Second
	// SlotWantLease is how long a holder refused every slot counts among an endpoint's
	// contenders: a process that still wants a share asks again well within it.
	SlotWantLease = time.Second
)

const (
	// slotBatch is how many slots a worker asks for at a time: enough that a busy endpoint's
	// process reaches the cap in a few round trips, few enough that the processes share it.
	slotBatch = 2
	// slotIdle is how long slots stay unused before they are given back, so that a process
	// without work for an endpoint leaves its cap to the others.
	slotIdle = 500 * time.Millisecond
	// slotLook is how often the heartbeat renews, and so learns the contenders of, the
	// endpoints whose share a contender arriving or leaving would change (endpointState.watched):
	// a process holding more than its new share gives the rest back within about slotLook and
	// an attempt's length.
	slotLook = 100 * time.Millisecond
	// slotRetry is how soon a process refused slots that another holds above its share asks
	// again, its jobs waiting in its line meanwhile.
	slotRetry = 20 * time.Millisecond
	// slotExpect is how long such a process expects the slots back: past it, its jobs snooze.
	slotExpect = 300 * time.Millisecond
	// slotCallTimeout bounds one call of the leaser.
	slotCallTimeout = 5 * time.Second
)

// fleetSlots is this process's part of the leased slots. How many of each endpoint it holds and
// until when lives in the endpoint's state (endpointState.held, heldUntil), under the states'
// mutex; fleetSlots makes the leaser's calls, outside it. Each call for an endpoint sets the
// holder's count there to the one kept here, and one endpoint has one call in flight at a time
// (endpointState.leasing), so the two counts agree whatever order the calls end in. A renewal
// changes no count and goes at any time. A Client started makes a new holder id, so a restarted
// process never counts the slots its previous run held.
type fleetSlots struct {
	leaser SlotLeaser
	states *endpointStates
	lease  time.Duration
	// The outages of the leaser's calls, each logged once with summaries (package outage).
	leaseFails, renewFails, giveBackFails *outage.Cause

	mu      sync.Mutex
	holder  string
	ctx     context.Context // the heartbeat's, which stop cancels
	cancel  context.CancelFunc
	done    chan struct{}
	retries sync.WaitGroup // the acquisitions asked again (retry) that have not ended
}

func newFleetSlots(leaser SlotLeaser, states *endpointStates, lease time.Duration, logger *slog.Logger) *fleetSlots {
	out := outage.New(logger, nil)
	return &fleetSlots{leaser: leaser, states: states, lease: lease,
		leaseFails: out.Cause("fleet slots: lease"), renewFails: out.Cause("fleet slots: renew"), giveBackFails: out.Cause("fleet slots: give back")}
}

// newHolderID returns a random holder id.
func newHolderID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "h_" + hex.EncodeToString(b)
}

func (f *fleetSlots) holderID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holder
}

// start takes a new holder id and starts the heartbeat: it renews every held lease each lease/3
// (each slotLook those watched), and gives back the slots left idle and those above the share.
func (f *fleetSlots) start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holder = newHolderID()
	ctx, f.cancel = context.WithCancel(context.WithoutCancel(ctx))
	f.ctx = ctx
	done := make(chan struct{})
	f.done = done
	go func() {
		defer close(done)
		f.heartbeat(ctx)
	}()
}

// stop ends the heartbeat and gives back every slot this process holds. The workers have
// stopped: no acquisition is in flight.
func (f *fleetSlots) stop(ctx context.Context) {
	f.mu.Lock()
	cancel, done, holder := f.cancel, f.done, f.holder
	f.cancel, f.done = nil, nil
	f.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	f.retries.Wait()
	for _, id := range f.states.dropSlots() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), slotCallTimeout)
		err := f.leaser.ReleaseSlots(cctx, holder, id, 0)
		cancel()
		if err != nil {
			f.giveBackFails.Fail(err, slog.String("endpoint", id), slog.String("meanwhile", "they are free when their lease ends"), slog.Duration("lease", f.lease))
		} else {
			f.giveBackFails.OK()
		}
	}
}

// acquire asks the leaser for want more slots of the endpoint, whose cap is capacity, beyond
// the held this process counts, and tells the endpoint's state what came of it. The state
// marked the endpoint leasing when it asked for the call.
func (f *fleetSlots) acquire(ctx context.Context, id string, held, want, capacity int) {
	sent := time.Now()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), slotCallTimeout)
	granted, contenders, err := f.leaser.AcquireSlots(cctx, f.holderID(), id, held, want, capacity, f.lease)
	cancel()
	if err != nil {
		f.leaseFails.Fail(err, slog.String("endpoint", id), slog.String("meanwhile", "its jobs wait"))
	} else {
		f.leaseFails.OK()
	}
	// The lease ends lease after the leaser's clock read it, which is after sent: counted from
	// sent it ends here no later than there.
	if f.states.granted(id, held, want, granted, contenders, err == nil, sent.Add(f.lease), time.Now()) {
		f.retryAfter(id, slotRetry)
	}
}

// retryAfter asks again for slots of the endpoint after d, for the jobs waiting in its line,
// unless the heartbeat has stopped.
func (f *fleetSlots) retryAfter(id string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx == nil || f.ctx.Err() != nil {
		return
	}
	ctx := f.ctx
	f.retries.Add(1)
	time.AfterFunc(d, func() {
		defer f.retries.Done()
		if ctx.Err() != nil {
			return
		}
		if held, want, capacity, ok := f.states.retrySlots(id, time.Now()); ok {
			f.acquire(ctx, id, held, want, capacity)
		}
	})
}

// heartbeat renews the held leases every lease/3, and those of the watched endpoints every
// slotLook; it gives back idle slots every slotIdle (or lease/3 when shorter), and slots above
// the share once renewals or acquisitions show contenders, and whenever an attempt's end leaves
// some unused (endpointStates.surplus); until ctx ends.
func (f *fleetSlots) heartbeat(ctx context.Context) {
	tick := time.NewTicker(min(slotLook, f.lease/3))
	defer tick.Stop()
	lastRenew, lastIdle := time.Now(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.states.surplus:
			f.settle(ctx, false)
			continue
		case <-tick.C:
		}
		if time.Since(lastRenew) >= f.lease/3-time.Millisecond || f.states.watched() {
			lastRenew = time.Now()
			f.renew(ctx)
		}
		idle := time.Since(lastIdle) >= min(slotIdle, f.lease/3)-time.Millisecond
		if idle {
			lastIdle = time.Now()
		}
		f.settle(ctx, idle)
	}
}

// settle gives back the slots above the share and not in use, with idle those not used since
// the last idle look too (and sets again the counts whose last release failed).
func (f *fleetSlots) settle(ctx context.Context, idle bool) {
	holder := f.holderID()
	for id, keep := range f.states.settleSlots(time.Now(), idle) {
		cctx, cancel := context.WithTimeout(ctx, slotCallTimeout)
		err := f.leaser.ReleaseSlots(cctx, holder, id, keep)
		cancel()
		f.states.released(id, err == nil)
	}
}

// renew renews the leases of every endpoint whose slots this process holds, in one call. An
// endpoint the leaser did not renew is held no more; a failed call leaves the leases to run
// out, and past its end here an endpoint's slots count as none (endpointState.leased).
func (f *fleetSlots) renew(ctx context.Context) {
	ids := f.states.heldEndpoints()
	if len(ids) == 0 {
		return
	}
	sent := time.Now()
	cctx, cancel := context.WithTimeout(ctx, slotCallTimeout)
	renewed, err := f.leaser.RenewSlots(cctx, f.holderID(), ids, f.lease)
	cancel()
	if err != nil {
		f.renewFails.Fail(err, slog.Int("endpoints", len(ids)), slog.String("meanwhile", "past their lease it admits no attempt on them"))
		return
	}
	f.renewFails.OK()
	f.states.renewed(ids, renewed, sent, sent.Add(f.lease))
}

// share is the most slots of the endpoint this process keeps: the cap divided among the
// contenders the leaser last counted, rounded up; the whole cap when none other contends.
func (st *endpointState) share() int {
	if st.contenders <= 1 {
		return st.fleetCap
	}
	return (st.fleetCap + st.contenders - 1) / st.contenders
}

// fleetCapacity is the endpoint's cap in this process at real time now: its slots leased, within
// its share.
func (st *endpointState) fleetCapacity(now time.Time) int {
	return min(st.fleetCap, st.leased(now), st.share())
}

// watched says whether a contender arriving or leaving would change the endpoint's share here:
// the heartbeat then renews, and so counts its contenders, every slotLook.
func (st *endpointState) watched() bool {
	if st.held <= 0 {
		return false
	}
	return st.contenders > 1 || st.held > (st.fleetCap+1)/2
}

// expecting says whether the process, refused slots of the endpoint, expects some back soon: its
// jobs then wait in its line instead of snoozing.
func (st *endpointState) expecting(now time.Time) bool {
	return now.Before(st.expectUntil)
}

// The endpoint states' side of the slots, under their mutex.

// leased is the number of slots the process holds of the endpoint at real time now: none once
// the lease has ended here.
func (st *endpointState) leased(now time.Time) int {
	if st.held <= 0 || !now.Before(st.heldUntil) {
		return 0
	}
	return st.held
}

// wantSlots says whether an attempt refused by the endpoint's cap asks the leaser for more: the
// process holds fewer than the cap and every held slot is busy, fewer than the cap are in
// flight, no call for the endpoint is in flight, and the leaser did not refuse a moment ago. It marks the endpoint leasing and returns
// what to ask for.
func (st *endpointState) wantSlots(now time.Time) (held, want int, ok bool) {
	if st.leasing || now.Before(st.refusedUntil) || st.capacity >= st.fleetCap {
		return 0, 0, false
	}
	// Attempts still in flight on slots whose lease ended here count as held: the leaser then
	// grants none on top of them.
	held = max(st.leased(now), len(st.inFlight)+st.woken)
	limit := st.share()
	if held >= limit {
		return 0, 0, false // the process has its share: its jobs wait in its line
	}
	st.leasing = true
	if st.contenders > 1 {
		return held, limit - held, true // the whole share at once: the others hold the rest
	}
	return held, min(slotBatch, limit-held), true
}

// retrySlots is wantSlots for an acquisition asked again (fleetSlots.retryAfter): it asks only
// while jobs wait in the endpoint's line and the slots are expected back.
func (s *endpointStates) retrySlots(id string, now time.Time) (held, want, capacity int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.m[id]
	if st == nil || len(st.waiters) == 0 || !st.expecting(now) {
		return 0, 0, 0, false
	}
	held, want, ok = st.wantSlots(now)
	return held, want, st.fleetCap, ok
}

// fleetWait is how long a job refused because the other processes hold the endpoint's slots
// snoozes: about an attempt's length when one has ended here, else the time the others take to
// give back idle slots; never past the attempt timeout.
func (st *endpointState) fleetWait(now time.Time, timeout time.Duration) time.Duration {
	if len(st.inFlight) > 0 {
		return st.slotWait(now, timeout)
	}
	d := slotIdle
	if st.avgDur > 0 {
		d = max(st.avgDur, minSlotWait)
	}
	if timeout > 0 {
		d = min(d, max(timeout, minSlotWait))
	}
	return d
}

// granted records the end of an acquisition of want asked for with held: granted more slots,
// the lease of all of them ending at until, among contenders. Refused some (or the call failed),
// the endpoint's jobs do not ask again for a moment. Refused slots that others hold above their
// share, on an endpoint whose attempts are short, the process expects them back within
// slotExpect: its jobs wait in its line, and granted returns true to ask again after slotRetry.
// Otherwise the others hold their share or hold it long, and its jobs with none in flight snooze.
func (s *endpointStates) granted(id string, held, want, granted, contenders int, ok bool, until, now time.Time) (retry bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.leasing = false
	if !ok {
		st.refusedUntil = now.Add(minSlotWait)
		st.dirty = true // the leaser may have set the count: set it again at the next look
		return false
	}
	st.held, st.heldUntil, st.acquiredAt = held+granted, until, now
	st.contenders = contenders
	st.wants = st.held <= 0
	if granted < want {
		// The others hold at least the rest of the cap.
		others := st.fleetCap - st.held
		fast := st.avgDur < capWait
		if st.held < st.share() && others > (contenders-1)*st.share() && fast {
			if !st.expecting(now) {
				st.expectUntil = now.Add(slotExpect)
			}
			st.refusedUntil = now.Add(slotRetry)
			retry = true
		} else {
			st.expectUntil = time.Time{}
			st.refusedUntil = now.Add(minSlotWait)
		}
	} else {
		st.expectUntil = time.Time{}
	}
	st.capacity = st.fleetCapacity(now)
	st.wakeFree()
	return retry
}

// settleSlots takes back the slots each endpoint holds above its share and not in use, with idle
// also those it held but did not use since the last idle look (its peak of attempts in flight),
// and forgets those whose lease ended. It returns the endpoints whose count the leaser must be
// told, with the count to keep, and marks them leasing until released says how the call went.
func (s *endpointStates) settleSlots(now time.Time, idle bool) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for id, st := range s.m {
		if (st.held <= 0 && !st.dirty) || st.leasing {
			continue
		}
		busy := len(st.inFlight) + st.woken
		switch {
		case st.held > 0 && !now.Before(st.heldUntil):
			st.held = 0 // expired: the leaser has dropped them, or soon does
		case !idle || len(st.waiters) > 0 || now.Sub(st.acquiredAt) < slotIdle:
		default:
			if unused := st.held - max(st.peak, busy); unused > 0 {
				st.held -= unused
				st.dirty = true
			}
		}
		if surplus := st.held - max(st.share(), busy); surplus > 0 {
			st.held -= surplus
			st.dirty = true
		}
		if st.dirty {
			out[id] = st.held
			st.leasing = true
		}
		st.capacity = st.fleetCapacity(now)
		if idle {
			st.peak = busy
		}
	}
	return out
}

// overShare says whether the endpoint's slots here exceed its share with some not in use: the
// heartbeat is told at once (surplus), so that a contender gets them within an attempt's length.
func (st *endpointState) overShare() bool {
	return st.held > max(st.share(), len(st.inFlight)+st.woken) && !st.leasing
}

// watched says whether the heartbeat renews every slotLook (endpointState.watched).
func (s *endpointStates) watched() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.m {
		if st.watched() {
			return true
		}
	}
	return false
}

// released records the end of a release call for the endpoint.
func (s *endpointStates) released(id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(id)
	st.leasing = false
	st.dirty = !ok
	if st.held <= 0 && ok {
		st.wants = false // a release to none drops the want too
	}
}

// heldEndpoints returns the endpoints whose slots the process holds.
func (s *endpointStates) heldEndpoints() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, st := range s.m {
		if st.held > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// renewed extends to until the leases of the endpoints renewed by a call sent at sent, with the
// contenders counted, and forgets the slots of those asked for and not renewed (their lease had
// ended at the leaser), unless an acquisition since has set them anew.
func (s *endpointStates) renewed(asked []string, renewed map[string]int, sent, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range asked {
		st := s.m[id]
		contenders, ok := renewed[id]
		switch {
		case st == nil || st.held <= 0 || st.acquiredAt.After(sent):
		case ok:
			st.heldUntil, st.contenders = until, contenders
			st.capacity = st.fleetCapacity(time.Now())
			st.wakeFree()
		default:
			st.held, st.capacity = 0, 0
		}
	}
}

// dropSlots forgets every slot the process holds and returns the endpoints the leaser counts
// some of.
func (s *endpointStates) dropSlots() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, st := range s.m {
		if st.held > 0 || st.dirty || st.wants {
			ids = append(ids, id)
		}
		st.held, st.capacity, st.dirty, st.wants = 0, 0, false, false
	}
	return ids
}
