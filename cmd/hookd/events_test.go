package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/bus"
	"github.com/hookd/hookd/sqlite"
)

// deadLetter leaves one dead-lettered event in a new SQLite file and returns the file and the id.
func deadLetter(t *testing.T) (path, id string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "app.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := bus.New(s, &bus.Config{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.Subscribe("tenancy.invitation.created", func(context.Context, *bus.Dispatch) error {
		return errors.New("mailer down\nsecond line")
	})
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, tx, bus.Event{Name: "tenancy.invitation.created", Payload: map[string]string{"email": "a@b"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := b.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	failed, err := b.Failed(ctx, "", 10)
	if err != nil || len(failed) != 1 {
		t.Fatalf("failed: %v, %v", failed, err)
	}
	return path, failed[0].ID
}

func TestEventsListAndRedrive(t *testing.T) {
	path, id := deadLetter(t)
	db := "--db=sqlite:" + path
	r := run(t, "", "events", "list", db)
	if r.code != exitOK || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "tenancy.invitation.created") ||
		!strings.Contains(r.stdout, "mailer down second line") {
		t.Fatalf("events list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run(t, "", "events", "redrive", db, id); r.code != exitOK || !strings.Contains(r.stdout, id+": pending again") {
		t.Fatalf("events redrive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run(t, "", "events", "redrive", db, "evt_nope"); r.code == exitOK || !strings.Contains(r.stderr, "evt_nope is not a failed event") {
		t.Fatalf("events redrive of a missing event: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = run(t, "", "events", "list", db); r.code != exitOK || !strings.Contains(r.stdout, "no failed events") {
		t.Fatalf("events list after redrive: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"events"}, {"events", "frob"}, {"events", "redrive", db}, {"events", "redrive", db, "a", "b"}, {"events", "list", db, "--limit", "0"}, {"events", "list", "--db", "mysql://x"},
	} {
		if r := run(t, "", args...); r.code != exitUsage || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error that says how to fix it", args, r.code, r.stderr)
		}
	}
}
