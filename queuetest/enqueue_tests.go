package queuetest

import (
	"errors"
	"testing"

	"github.com/hookd/hookd"
)

var errRollback = errors.New("queuetest: roll back")

var enqueueTests = []test{
	{"CommittedIsWorkedOnce", nil, func(t *testing.T, f *fixture) {
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		now := firstJob("dlv_now")
		due := firstJob("dlv_due")
		due.NotBefore = past
		retry := retryJob("dlv_retry")
		retry.Attempt, retry.NotBefore = 7, past
		manual := manualJob("dlv_manual")
		manual.NotBefore = past.UTC()
		jobs := []hookd.Job{now, due, retry, manual}
		f.enqueue(jobs...)

		f.wait(rec, len(jobs), callWait)
		f.quiet()
		calls, _ := rec.Snapshot()
		f.onceEach(calls, jobs)
		for _, c := range calls {
			if c.Job.DeliveryID == now.DeliveryID && !c.Job.NotBefore.IsZero() {
				t.Errorf("a zero NotBefore came back %s", c.Job.NotBefore)
			}
		}

		// Done, the jobs stay done: a queue started again does not work them again.
		if err := f.stop(f.ctx); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		again := NewRecorder(nil)
		f.start(again.Handle)
		f.quiet()
		if calls, _ := again.Snapshot(); len(calls) != 0 {
			t.Errorf("jobs done before Stop worked again after Start:%s", showCalls(calls))
		}
	}},
	{"RolledBackIsNeverWorked", nil, func(t *testing.T, f *fixture) {
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		var enqueueErr error
		err := f.inTx(f.ctx, func(tx hookd.Tx) error {
			enqueueErr = f.queue.EnqueueTx(f.ctx, tx, []hookd.Job{firstJob("dlv_rolled_back"), retryJob("dlv_rolled_back_2")})
			return errRollback
		})
		if enqueueErr != nil {
			t.Fatalf("EnqueueTx: %v", enqueueErr)
		}
		if !errors.Is(err, errRollback) {
			t.Fatalf("InTx returned %v, want fn's error", err)
		}
		// A job committed after the rollback is worked: the queue runs, and still the rolled-back
		// jobs are not worked.
		control := firstJob("dlv_committed")
		f.enqueue(control)
		f.waitDelivery(rec, control.DeliveryID)
		f.quiet()
		calls, _ := rec.Snapshot()
		f.onceEach(calls, []hookd.Job{control})
	}},
	{"EnqueuedBeforeStart", nil, func(t *testing.T, f *fixture) {
		jobs := []hookd.Job{firstJob("dlv_1"), retryJob("dlv_2"), manualJob("dlv_3")}
		f.enqueue(jobs...)
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		f.wait(rec, len(jobs), callWait)
		f.quiet()
		calls, _ := rec.Snapshot()
		f.onceEach(calls, jobs)
	}},
	{"UnsupportedTx", nil, func(t *testing.T, f *fixture) {
		jobs := []hookd.Job{firstJob("dlv_1")}
		for _, tc := range []struct {
			name string
			tx   hookd.Tx
		}{
			{"nil tx", nil},
			{"Raw is a string", foreignTx{raw: "not a transaction"}},
			{"Raw is nil", foreignTx{}},
		} {
			if err := f.queue.EnqueueTx(f.ctx, tc.tx, jobs); !errors.Is(err, hookd.ErrUnsupportedTx) {
				t.Errorf("%s: EnqueueTx returned %v, want an error matching hookd.ErrUnsupportedTx", tc.name, err)
			}
		}
	}},
	{"EmptyDeliveryID", nil, func(t *testing.T, f *fixture) {
		for _, tc := range []struct {
			name string
			jobs []hookd.Job
		}{
			{"alone", []hookd.Job{{Attempt: 1}}},
			{"after a valid job", []hookd.Job{firstJob("dlv_1"), {Attempt: 2}}},
		} {
			var enqueueErr error
			err := f.inTx(f.ctx, func(tx hookd.Tx) error {
				enqueueErr = f.queue.EnqueueTx(f.ctx, tx, tc.jobs)
				return errors.Join(enqueueErr, errRollback)
			})
			if !errors.Is(enqueueErr, hookd.ErrInvalid) {
				t.Errorf("%s: EnqueueTx returned %v, want an error matching hookd.ErrInvalid", tc.name, enqueueErr)
			}
			if !errors.Is(err, errRollback) {
				t.Errorf("%s: InTx returned %v, want fn's error", tc.name, err)
			}
		}
	}},
	{"NoJobs", nil, func(t *testing.T, f *fixture) {
		err := f.inTx(f.ctx, func(tx hookd.Tx) error {
			if err := f.queue.EnqueueTx(f.ctx, tx, nil); err != nil {
				return err
			}
			return f.queue.EnqueueTx(f.ctx, tx, []hookd.Job{})
		})
		if err != nil {
			t.Errorf("EnqueueTx with no jobs: %v, want nil", err)
		}
	}},
}
