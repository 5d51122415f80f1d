package redisqueue_test

import (
	"slices"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// QueueDepth counts the tasks of each lane of the queue's namespace, ready and scheduled, in a
// queue that is not started (so none is worked).
func TestQueueDepth(t *testing.T) {
	t.Parallel()
	u := redisURL(t)
	store := openStore(t)
	q := newQueue(t, u, store, nil, nil)
	other := newQueue(t, u, store, nil, nil) // another namespace on the same Redis
	ctx := t.Context()
	later := time.Now().Add(time.Hour)
	enqueue(t, store, q,
		hookd.Job{DeliveryID: "dlv_1", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_2", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_3", Attempt: 1, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_4", Attempt: 2, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_5", Attempt: 1, Trigger: hookd.TriggerManual},
	)
	enqueue(t, store, other, hookd.Job{DeliveryID: "dlv_6", Attempt: 1})
	got, err := q.QueueDepth(ctx)
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
