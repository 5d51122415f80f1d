package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/bus"
)

const eventsUsage = `events list|redrive [--db sqlite:PATH|postgres://...] ...

The domain event bus's dead letters (package bus), read and re-driven in the database itself:
  events list [--after ID] [--limit N]   the events that failed every attempt: id, name,
                                         attempts, when, last error
  events redrive ID                      make a failed event pending again (attempts counted
                                         from zero); the app's bus dispatches it at its
                                         next poll
Both work while hookd serve, or an app that embeds hookd, runs on the database: on SQLite the
file is opened beside that process, which must run the same release.`

// runEvents handles "hookd events list|redrive".
func runEvents(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		f, _, _, _ := eventsFlags(e, "events")
		f.printHelp()
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageErrorf(`use "hookd events list" or "hookd events redrive ID"`, "events: say list or redrive")
	}
	sub, args := args[0], args[1:]
	f, dbFlag, after, limit := eventsFlags(e, "events "+sub)
	var names []string
	switch sub {
	case "list":
	case "redrive":
		names = []string{"ID"}
	default:
		return usageErrorf(`use "hookd events list" or "hookd events redrive ID"`, "events: unknown command %q", sub)
	}
	pos, err := f.parseArgs(args, names...)
	if err != nil {
		return err
	}
	if sub == "redrive" && len(pos) == 0 {
		return usageErrorf(`name the event: "hookd events redrive evt_..." (ids from "hookd events list")`, "events redrive: no event id")
	}
	if *limit < 1 || *limit > 1000 {
		return usageErrorf("use --limit between 1 and 1000", "events list: --limit %d is out of range", *limit)
	}
	d, err := dbFlagTarget(*dbFlag)
	if err != nil {
		return usageErrorf(`run "hookd events --help"`, "events: %v", err)
	}
	store, err := openMaintenanceDB(ctx, d)
	if err != nil {
		hint := besideHint(err)
		if hint == "" {
			hint = "check --db"
		}
		return failf(hint, "events: open the database: %v", err)
	}
	defer store.Close()
	out, ok := store.(bus.Outbox)
	if !ok {
		return failf("", "events: the store %T has no outbox", store)
	}
	b, err := bus.New(out, nil)
	if err != nil {
		return failf("", "events: %v", err)
	}
	if sub == "list" {
		evs, err := b.Failed(ctx, *after, *limit)
		if err != nil {
			return failf("", "events list: %v", err)
		}
		if len(evs) == 0 {
			fmt.Fprintln(e.stdout, "no failed events")
			return nil
		}
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tNAME\tATTEMPTS\tFAILED AT\tLAST ERROR")
		for _, ev := range evs {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", ev.ID, ev.Name, ev.Attempts, ev.UpdatedAt.Format(time.RFC3339), oneLine(ev.LastError, 100))
		}
		return w.Flush()
	}
	id := pos[0]
	if err := b.Redrive(ctx, id); err != nil {
		if errors.Is(err, hookd.ErrNotFound) {
			return failf(`list the failed events with "hookd events list"`, "events redrive: %s is not a failed event", id)
		}
		return failf("", "events redrive: %v", err)
	}
	fmt.Fprintf(e.stdout, "%s: pending again\n", id)
	return nil
}

// eventsFlags is the flag set of "hookd events" and its subcommands: --db, --after, --limit.
func eventsFlags(e *env, name string) (f *flags, db, after *string, limit *int) {
	f = newFlags(e, name, eventsUsage)
	db = f.String("db", "", "the database, as serve's --db (env HOOKD_DB, or DATABASE_URL; default sqlite:hookd.db)")
	after = f.String("after", "", "list: the events after this id")
	limit = f.Int("limit", 50, "list: at most this many events (1 to 1000)")
	return f, db, after, limit
}

// oneLine shortens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n-3], "") + "..."
	}
	return s
}
