package main

import (
	"context"
	"fmt"

	svix "github.com/svix/svix-webhooks/go"
)

// runEventType handles "hookd event-type create|add|list|delete"; add is create's other name.
func runEventType(ctx context.Context, e *env, args []string) error {
	return runGroup(ctx, e, "event-type", "Manages the event types messages carry and endpoints subscribe to.", []subcommand{
		{"create", "create an event type (event-type create NAME [--description D])", eventTypeCreate("create")},
		{"add", "the same as create (event-type add NAME [--description D])", eventTypeCreate("add")},
		{"list", "list the event types", runEventTypeList},
		{"delete", "archive an event type, or remove it with --expunge (event-type delete NAME)", runEventTypeDelete},
	}, args)
}

// eventTypeCreate returns "event-type create", under the name verb (create, or add).
func eventTypeCreate(verb string) func(ctx context.Context, e *env, args []string) error {
	return func(ctx context.Context, e *env, args []string) error { return runEventTypeCreate(ctx, e, verb, args) }
}

func runEventTypeCreate(ctx context.Context, e *env, verb string, args []string) error {
	f := newFlags(e, "event-type "+verb, "event-type "+verb+" NAME [--description D]\n\nCreates an event type, e.g. invoice.paid (letters, digits, - _ .)."+clientHelp)
	desc := f.String("description", "", "what the event means (optional)")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "NAME")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	et, err := c.sdk.EventType.CreateWithOptions(ctx, &svix.EventTypeIn{Name: pos[0], Description: *desc}, once())
	if err != nil {
		return c.fail("create event type "+pos[0], err)
	}
	if c.json {
		return c.printJSON(et)
	}
	c.printFields(
		[2]string{"name", et.Name},
		[2]string{"description", orDash(et.Description)},
		[2]string{"created", formatTime(et.CreatedAt)},
	)
	return nil
}

func runEventTypeList(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "event-type list", "event-type list [--limit N] [--archived]\n\nLists the event types."+clientHelp)
	limit := limitFlag(f, "event types")
	archived := f.Bool("archived", false, "include archived event types")
	cf := addClientFlags(f)
	if _, err := f.parseArgs(args); err != nil {
		return err
	}
	if err := checkLimit(f, *limit); err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	opts := &svix.EventTypeListOptions{}
	if *archived {
		opts.IncludeArchived = archived
	}
	fetch := func(it *string, n int32) (page[svix.EventTypeOut], error) {
		opts.Iterator, opts.Limit = it, &n
		l, err := c.sdk.EventType.List(ctx, opts)
		if err != nil {
			return page[svix.EventTypeOut]{}, err
		}
		return page[svix.EventTypeOut]{l.Data, l.Done, l.Iterator.Get()}, nil
	}
	return printList(ctx, c, "event types", target{}, *limit, fetch, []string{"NAME", "STATE", "DESCRIPTION", "CREATED"},
		func(t *svix.EventTypeOut) []string {
			state := "active"
			switch {
			case t.Archived != nil && *t.Archived:
				state = "archived"
			case t.Deprecated:
				state = "deprecated"
			}
			return []string{t.Name, state, orDash(t.Description), formatTime(t.CreatedAt)}
		})
}

func runEventTypeDelete(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "event-type delete", "event-type delete NAME [--expunge]\n\nArchives the event type (list hides it unless --archived), or with --expunge\nremoves it for good."+clientHelp)
	expunge := f.Bool("expunge", false, "remove the event type for good instead of archiving it")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "NAME")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	var opts *svix.EventTypeDeleteOptions
	if *expunge {
		opts = &svix.EventTypeDeleteOptions{Expunge: expunge}
	}
	if err := c.sdk.EventType.DeleteWithOptions(ctx, pos[0], opts); err != nil {
		return c.failAt(ctx, "delete event type "+pos[0], target{eventType: pos[0]}, err)
	}
	verb := "archived"
	if *expunge {
		verb = "expunged"
	}
	if c.json {
		return c.printJSON(map[string]any{"name": pos[0], verb: true})
	}
	fmt.Fprintf(e.stdout, "%s event type %s\n", verb, pos[0])
	return nil
}
