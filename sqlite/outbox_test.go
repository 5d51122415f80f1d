package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/internal/logcheck"
	"github.com/hookd/hookd/sqlite"
)

// TestEventsByIDManyIDs reads events by more ids than SQLite takes parameters in one statement
// (32,766): a publish may commit that many at once.
func TestEventsByIDManyIDs(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), &sqlite.Config{Logger: logcheck.New(t).Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := bus.Record{ID: "evt_many", Name: "order.placed", Payload: []byte(`{}`), OccurredAt: now, NextAttempt: now, CreatedAt: now, UpdatedAt: now}
	if err := s.InsertEvents(ctx, tx, []bus.Record{ev}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 40_000, 40_001)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_none%07d", i)
	}
	recs, err := s.EventsByID(ctx, append(ids, ev.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != ev.ID {
		t.Errorf("EventsByID of 40,001 ids = %+v, want %s alone", recs, ev.ID)
	}
}
