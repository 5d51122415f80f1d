package sqlite_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// QueueDepth counts the jobs of each lane, due and scheduled, without working any.
func TestQueueDepth(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "hookd.db"))
	q := newStoreQueue(t, s).(*sqlite.Queue)
	ctx := t.Context()
	if got, err := q.QueueDepth(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty queue: %v, %v; want no lanes", got, err)
	}
	later := time.Now().Add(time.Hour)
	jobs := []hookd.Job{
		{DeliveryID: "dlv_1", Attempt: 1},
		{DeliveryID: "dlv_2", Attempt: 1},
		{DeliveryID: "dlv_3", Attempt: 1, NotBefore: later},
		{DeliveryID: "dlv_4", Attempt: 2, NotBefore: later},
		{DeliveryID: "dlv_5", Attempt: 1, Trigger: hookd.TriggerManual},
	}
	if err := s.InTx(ctx, func(tx hookd.Tx) error { return q.EnqueueTx(ctx, tx, jobs) }); err != nil {
		t.Fatal(err)
	}
	got, err := q.QueueDepth(ctx)
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
