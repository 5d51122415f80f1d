package riverqueue_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// QueueDepth counts the river_job rows of each lane of a queue that is not started, so none is
// worked: a NotBefore beyond River's 5 s step is scheduled, one without is available.
func TestQueueDepth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q := newQueue(t, b.db, nil)
	ctx := t.Context()
	got, err := q.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	empty := []hookd.LaneDepth{{Lane: hookd.LaneFirst}, {Lane: hookd.LaneRetry}, {Lane: hookd.LaneManual}}
	if !slices.Equal(got, empty) {
		t.Fatalf("empty queue: %+v, want %+v", got, empty)
	}
	later := time.Now().Add(time.Hour)
	enqueue(t, b.db, q,
		hookd.Job{DeliveryID: "dlv_1", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_2", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_3", Attempt: 1, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_4", Attempt: 2, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_5", Attempt: 1, Trigger: hookd.TriggerManual},
	)
	got, err = q.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []hookd.LaneDepth{
		{Lane: hookd.LaneFirst, Due: 2, Scheduled: 1},
		{Lane: hookd.LaneRetry, Scheduled: 1},
		{Lane: hookd.LaneManual, Due: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("depth %+v, want %+v", got, want)
	}
}
