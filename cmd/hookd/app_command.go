package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	svix "github.com/svix/svix-webhooks/go"
)

// runApp handles "hookd app create|list|get|update|delete".
func runApp(ctx context.Context, e *env, args []string) error {
	return runGroup(ctx, e, "app", "Manages applications: each is one customer, with its own endpoints and messages.", []subcommand{
		{"create", "create an application (app create --name N [--uid U])", runAppCreate},
		{"list", "list the applications", runAppList},
		{"get", "show one application (app get APP)", runAppGet},
		{"update", "change an application's name, uid, rate limit or retry policy (app update APP [--name N] [--uid U] [--rate-limit N] [--retry-schedule WAITS] [--attempt-timeout D])", runAppUpdate},
		{"delete", "delete an application with its endpoints and messages (app delete APP)", runAppDelete},
	}, args)
}

func runAppCreate(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "app create", "app create --name N [--uid U]\n\nCreates an application. --uid is your own id for it (letters, digits, - _ .);\nevery command accepts it wherever APP is asked."+clientHelp)
	name := f.String("name", "", "the application's name (required)")
	uid := f.String("uid", "", "your unique id for the application (optional)")
	cf := addClientFlags(f)
	if _, err := f.parseArgs(args); err != nil {
		return err
	}
	if *name == "" {
		return usageErrorf(`e.g. hookd app create --name "Acme Corp" --uid acme`, "app create: --name is required")
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	in := &svix.ApplicationIn{Name: *name}
	if *uid != "" {
		in.Uid = uid
	}
	app, err := c.sdk.Application.CreateWithOptions(ctx, in, once())
	if err != nil {
		return c.fail("create application", err)
	}
	return c.printApp(ctx, app)
}

func runAppList(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "app list", "app list [--limit N]\n\nLists the applications."+clientHelp)
	limit := limitFlag(f, "applications")
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
	fetch := func(it *string, n int32) (page[svix.ApplicationOut], error) {
		l, err := c.sdk.Application.List(ctx, &svix.ApplicationListOptions{Iterator: it, Limit: &n})
		if err != nil {
			return page[svix.ApplicationOut]{}, err
		}
		return page[svix.ApplicationOut]{l.Data, l.Done, l.Iterator.Get()}, nil
	}
	return printList(ctx, c, "applications", target{}, *limit, fetch, []string{"ID", "UID", "NAME", "CREATED"},
		func(a *svix.ApplicationOut) []string {
			return []string{a.Id, orDash(deref(a.Uid)), a.Name, formatTime(a.CreatedAt)}
		})
}

func runAppGet(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "app get", "app get APP\n\nShows one application; APP is its id or uid."+clientHelp)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	app, err := c.sdk.Application.Get(ctx, pos[0])
	if err != nil {
		return c.failAt(ctx, "get application "+pos[0], target{app: pos[0]}, err)
	}
	return c.printApp(ctx, app)
}

func runAppUpdate(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "app update", "app update APP [--name N] [--uid U] [--rate-limit N] [--retry-schedule WAITS]\n       [--attempt-timeout D]\n\nChanges the application APP (its id or uid). Only the flags given change.\n--uid \"\" removes the uid; --rate-limit 0 removes the limit. The retry policy is\nthe default of the application's endpoints that set none of their own.\n\n"+retryPolicyHelp+clientHelp)
	name := f.String("name", "", "the new name")
	uid := f.String("uid", "", "the new uid (letters, digits, - _ .); \"\" removes it")
	rate := f.Int("rate-limit", 0, "the most deliveries a second to each of its endpoints; 0 removes the limit")
	rp := addRetryPolicyFlags(f)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	hint := `run "hookd app update --help" for the flags`
	patch := &svix.ApplicationPatch{}
	changed := false
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) {
		given[fl.Name] = true
		switch fl.Name {
		case "retry-schedule", "attempt-timeout":
			changed = true
		case "name":
			patch.Name, changed = name, true
		case "uid":
			changed = true
			if *uid == "" {
				patch.Uid = *svix.NullableString(nil)
			} else {
				patch.Uid = *svix.NullableString(uid)
			}
		case "rate-limit":
			changed = true
			// The SDK cannot send null in a PATCH: 0 is how it says "no limit".
			patch.RateLimit = *svix.NullableInt32(svix.Int32(int32(min(max(*rate, 0), 1<<31-1))))
		}
	})
	switch {
	case !changed:
		return usageErrorf(hint+`; e.g. hookd app update acme --name "Acme Inc"`, "app update: nothing to change: pass --name, --uid, --rate-limit, --retry-schedule or --attempt-timeout")
	case patch.Name != nil && *name == "":
		return usageErrorf(hint, "app update: --name is empty")
	case *rate < 0:
		return usageErrorf(hint, "app update: --rate-limit must be 0 (no limit) or more, got %d", *rate)
	}
	policy, err := rp.fields("app update", given)
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	// The SDK's ApplicationPatch has no retry policy: the same body with it, in one request.
	op := "update application " + pos[0]
	body, err := patch.ToMap()
	if err != nil {
		return failf("", "%s: %v", op, err)
	}
	for k, v := range policy {
		body[k] = v
	}
	app := &svix.ApplicationOut{}
	if err := c.hookdCall(ctx, op, http.MethodPatch, "/api/v1/app/"+url.PathEscape(pos[0]), body, app); err != nil {
		return c.failAt(ctx, op, target{app: pos[0]}, err)
	}
	return c.printApp(ctx, app)
}

// appPolicy is an application's retry policy, hookd's own fields in today's shape only.
type appPolicy struct {
	RetrySchedule  []float64 `json:"retrySchedule"`
	TimeoutSeconds *float64  `json:"timeoutSeconds"`
}

func runAppDelete(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "app delete", "app delete APP\n\nDeletes an application with its endpoints and messages; APP is its id or uid."+clientHelp)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	if err := c.sdk.Application.Delete(ctx, pos[0]); err != nil {
		return c.failAt(ctx, "delete application "+pos[0], target{app: pos[0]}, err)
	}
	if c.json {
		return c.printJSON(map[string]any{"id": pos[0], "deleted": true})
	}
	fmt.Fprintf(e.stdout, "deleted application %s\n", pos[0])
	return nil
}

// printApp prints a with its retry policy, read in today's shape.
func (c *conn) printApp(ctx context.Context, a *svix.ApplicationOut) error {
	var own appPolicy
	if err := c.hookdCall(ctx, "get the retry policy of application "+a.Id, http.MethodGet, "/api/v1/app/"+url.PathEscape(a.Id), nil, &own); err != nil {
		return err
	}
	if c.json {
		m, err := a.ToMap()
		if err != nil {
			return c.printJSON(a)
		}
		m["retrySchedule"], m["timeoutSeconds"] = own.RetrySchedule, own.TimeoutSeconds
		return c.printJSON(m)
	}
	schedule, timeout := formatPolicy(own.RetrySchedule, own.TimeoutSeconds)
	rate := "-"
	if a.RateLimit != nil {
		rate = strconv.Itoa(int(*a.RateLimit)) + "/s"
	}
	c.printFields(
		[2]string{"id", a.Id},
		[2]string{"uid", orDash(deref(a.Uid))},
		[2]string{"name", a.Name},
		[2]string{"rate limit", rate},
		[2]string{"retry schedule", schedule},
		[2]string{"attempt timeout", timeout},
		[2]string{"created", formatTime(a.CreatedAt)},
		[2]string{"updated", formatTime(a.UpdatedAt)},
	)
	return nil
}
