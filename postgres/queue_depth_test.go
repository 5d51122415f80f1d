package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// QueueDepth counts the jobs of each lane, due and scheduled, without working any.
func TestQueueDepth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s, q := process(t, b, nil)
	d := q.(hookd.QueueDepther)
	ctx := t.Context()
	if got, err := d.QueueDepth(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty queue: %v, %v; want no lanes", got, err)
	}
	later := time.Now().Add(time.Hour)
	enqueue(t, s, q,
		hookd.Job{DeliveryID: "dlv_1", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_2", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_3", Attempt: 1, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_4", Attempt: 2, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_5", Attempt: 1, Trigger: hookd.TriggerManual},
	)
	got, err := d.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b hookd.LaneDepth) int { return strings.Compare(string(a.Lane), string(b.Lane)) })
	want := []hookd.LaneDepth{
		{Lane: hookd.LaneFirst, Due: 2, Scheduled: 1},
		{Lane: hookd.LaneManual, Due: 1},
		{Lane: hookd.LaneRetry, Scheduled: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("depth %+v, want %+v", got, want)
	}
}

// The River queue on PostgreSQL counts river_job rows by lane: a NotBefore beyond River's 5 s step
// is scheduled.
func TestRiverQueueDepth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q, err := b.store.NewRiverQueue(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	enqueue(t, b.store, q,
		hookd.Job{DeliveryID: "dlv_1", Attempt: 1},
		hookd.Job{DeliveryID: "dlv_2", Attempt: 2, NotBefore: later},
		hookd.Job{DeliveryID: "dlv_3", Attempt: 1, Trigger: hookd.TriggerManual, NotBefore: later},
	)
	got, err := q.QueueDepth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []hookd.LaneDepth{
		{Lane: hookd.LaneFirst, Due: 1},
		{Lane: hookd.LaneRetry, Scheduled: 1},
		{Lane: hookd.LaneManual, Scheduled: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("depth %+v, want %+v", got, want)
	}
}
