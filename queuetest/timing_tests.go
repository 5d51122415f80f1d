package queuetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// The bounds on how late a job due soon, and a job due later, is handed to the handler.
const (
	nearLate = 150 * time.Millisecond
	farLate  = 300 * time.Millisecond
	farAhead = 6 * time.Second
)

// timingTests run one at a time, after the parallel tests.
var timingTests = []test{
	{"NotBeforeNear", nil, func(t *testing.T, f *fixture) {
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		// Measure a running queue, not its start-up.
		var warm []hookd.Job
		for _, l := range lanes {
			warm = append(warm, laneJobs[l]("warm_up_"+string(l)))
		}
		f.enqueue(warm...)
		f.wait(rec, len(warm), callWait)
		rec.Reset()

		now := time.Now()
		var jobs []hookd.Job
		for _, ahead := range []time.Duration{200 * time.Millisecond, 1200 * time.Millisecond} {
			for _, l := range lanes {
				for i := range 2 {
					j := laneJobs[l](fmt.Sprintf("dlv_%s_%s_%d", l, ahead, i))
					// Whole microseconds: no backend may read back an instant before it.
					j.NotBefore = now.Add(ahead).Truncate(time.Microsecond)
					jobs = append(jobs, j)
				}
			}
		}
		f.enqueue(jobs...)
		calls := f.wait(rec, len(jobs), callWait)
		f.onceEach(calls, jobs)
		f.checkLate(calls, jobs, now, nearLate)
	}},
	{"NotBeforeFar", nil, func(t *testing.T, f *fixture) {
		if testing.Short() {
			t.Skipf("waits %s", farAhead)
		}
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		now := time.Now()
		j := retryJob("dlv_1")
		j.NotBefore = now.Add(farAhead).Truncate(time.Microsecond)
		f.enqueue(j)
		calls := f.wait(rec, 1, farAhead+callWait)
		f.onceEach(calls, []hookd.Job{j})
		f.checkLate(calls, []hookd.Job{j}, now, farLate)
	}},
}

// checkLate fails the test unless each call came at or after the NotBefore its job was enqueued
// with (in jobs), and at most bound (times Timing) after it. now is when the jobs were made.
func (f *fixture) checkLate(calls []Call, jobs []hookd.Job, now time.Time, bound time.Duration) {
	f.t.Helper()
	bound = f.scale(bound)
	notBefore := make(map[string]time.Time, len(jobs))
	for _, j := range jobs {
		notBefore[j.DeliveryID] = j.NotBefore
	}
	for _, c := range calls {
		nb := notBefore[c.Job.DeliveryID]
		late := c.At.Sub(nb)
		f.t.Logf("%s (%s lane, due in %s): called %s after NotBefore", c.Job.DeliveryID, c.Job.Lane(),
			nb.Sub(now).Round(time.Millisecond), late)
		switch {
		case late < 0:
			f.t.Errorf("%s called %s before its NotBefore", c.Job.DeliveryID, -late)
		case late > bound:
			f.t.Errorf("%s called %s after its NotBefore, want at most %s", c.Job.DeliveryID, late, bound)
		}
	}
}
