package queuetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// shortStop is the context the StopCancels test gives Stop.
const shortStop = 200 * time.Millisecond

var lifecycleTests = []test{
	{"StopWaitsForJobInFlight", nil, func(t *testing.T, f *fixture) {
		release := f.newGate()
		finished := make(chan error, 1) // the handler's context's error when it was released
		rec := NewRecorder(func(ctx context.Context, _ hookd.Job, _ int) error {
			err := release.wait(ctx)
			select {
			case finished <- err:
			default:
			}
			return err
		})
		f.start(rec.Handle)
		job := firstJob("dlv_1")
		f.enqueue(job)
		f.waitDelivery(rec, job.DeliveryID)

		ctx, cancel := context.WithTimeout(context.Background(), f.scale(stopWait))
		defer cancel()
		stopped := make(chan error, 1)
		go func() { stopped <- f.queue.Stop(ctx) }()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned (%v) while a job was in flight", err)
		case <-time.After(f.scale(200 * time.Millisecond)):
		}
		release.open()
		select {
		case err := <-stopped:
			if err != nil {
				t.Fatalf("Stop: %v, want nil: the job finished within Stop's context", err)
			}
		case <-time.After(f.scale(2 * stopWait)):
			t.Fatalf("Stop did not return in %s", f.scale(2*stopWait))
		}
		select {
		case err := <-finished:
			if err != nil {
				t.Errorf("the handler's context ended (%v) during Stop, want it live until Stop's context ends", err)
			}
		default:
			t.Error("Stop returned before the job in flight finished")
		}

		// The job finished: a queue started again does not work it again.
		again := NewRecorder(nil)
		f.start(again.Handle)
		f.quiet()
		if calls, _ := again.Snapshot(); len(calls) != 0 {
			t.Errorf("a job finished during Stop worked again after Start:%s", showCalls(calls))
		}
	}},
	{"StopCancelsJobAtDeadline", nil, func(t *testing.T, f *fixture) {
		never := f.newGate() // opens only when the test ends
		cancelled := make(chan error, 1)
		first := NewRecorder(func(ctx context.Context, _ hookd.Job, _ int) error {
			if err := never.wait(ctx); err != nil {
				select {
				case cancelled <- err:
				default:
				}
				return fmt.Errorf("post: %w", err)
			}
			return nil
		})
		f.start(first.Handle)
		job := manualJob("dlv_1")
		f.enqueue(job)
		f.waitDelivery(first, job.DeliveryID)

		ctx, cancel := context.WithTimeout(context.Background(), shortStop)
		defer cancel()
		began := time.Now()
		err := f.stop(ctx)
		t.Logf("Stop with a %s context returned after %s: %v", shortStop, time.Since(began).Round(time.Millisecond), err)
		if err == nil {
			t.Error("Stop returned nil, want an error: a job was still running when its context ended")
		}
		select {
		case err := <-cancelled:
			if err == nil {
				t.Error("the handler's context ended without an error")
			}
		case <-time.After(f.scale(callWait)):
			t.Fatalf("the running handler's context was not cancelled in %s after Stop's context ended", f.scale(callWait))
		}

		// Started again, with a new handler, the queue works the interrupted job again.
		second := NewRecorder(nil)
		f.start(second.Handle)
		calls := f.waitDelivery(second, job.DeliveryID)
		if !sameJob(job, calls[0].Job) {
			t.Errorf("after Start again the handler got %s, want %s", showJob(calls[0].Job), showJob(job))
		}
		if n := first.count(); n != 1 {
			t.Errorf("the first handler called %d times, want 1 (none after Stop)", n)
		}
	}},
	{"StartTwice", nil, func(t *testing.T, f *fixture) {
		first, second := NewRecorder(nil), NewRecorder(nil)
		f.start(first.Handle)
		if err := f.queue.Start(context.Background(), second.Handle); err == nil {
			t.Error("a second Start without Stop returned nil, want an error")
		}
		job := firstJob("dlv_1")
		f.enqueue(job)
		f.waitDelivery(first, job.DeliveryID)
		f.quiet()
		calls, _ := first.Snapshot()
		f.onceEach(calls, []hookd.Job{job})
		if calls, _ := second.Snapshot(); len(calls) != 0 {
			t.Errorf("the handler of the refused Start was called:%s", showCalls(calls))
		}
	}},
	{"StartNilHandler", nil, func(t *testing.T, f *fixture) {
		if err := f.queue.Start(context.Background(), nil); err == nil {
			t.Fatal("Start with a nil handler returned nil, want an error")
		}
		rec := NewRecorder(nil)
		f.start(rec.Handle)
		job := firstJob("dlv_1")
		f.enqueue(job)
		f.waitDelivery(rec, job.DeliveryID)
	}},
}
