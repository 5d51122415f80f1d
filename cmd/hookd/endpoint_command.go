package main

import (
	"context"
	"fmt"
	"strconv"

	svix "github.com/svix/svix-webhooks/go"
)

// runEndpoint handles "hookd endpoint add|list|get|disable|enable|rotate-secret|secret".
func runEndpoint(ctx context.Context, e *env, args []string) error {
	return runGroup(ctx, e, "endpoint", "Manages an application's endpoints: the URLs its messages are delivered to.", []subcommand{
		{"add", "add an endpoint (endpoint add APP --url URL [--event-type T ...])", runEndpointAdd},
		{"list", "list an application's endpoints (endpoint list APP)", runEndpointList},
		{"get", "show one endpoint (endpoint get APP EP)", runEndpointGet},
		{"disable", "stop delivering to an endpoint (endpoint disable APP EP)", runEndpointDisable},
		{"enable", "resume delivering to an endpoint (endpoint enable APP EP)", runEndpointEnable},
		{"rotate-secret", "replace an endpoint's signing secret (endpoint rotate-secret APP EP [--show-secret])", runEndpointRotate},
		{"secret", "print an endpoint's signing secret (endpoint secret APP EP)", runEndpointSecret},
	}, args)
}

func runEndpointAdd(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "endpoint add", "endpoint add APP --url URL [--event-type T ...] [--channel C ...] [--uid U] [--description D]\n\nAdds an endpoint to the application APP (its id or uid). Without --event-type\nit receives every event type; without --channel, every channel. Here --url is\nthe endpoint's URL: give the server's with --server (or HOOKD_URL)."+clientHelp)
	target := f.String("url", "", "the endpoint's URL, where messages are POSTed (required)")
	var types, channels stringList
	f.Var(&types, "event-type", "deliver only this event type; repeat for several (default: all)")
	f.Var(&channels, "channel", "deliver only messages on this channel; repeat for several (default: all)")
	uid := f.String("uid", "", "your unique id for the endpoint within the application (optional)")
	desc := f.String("description", "", "a description shown in lists (optional)")
	cf := addClientFlags(f) // --url is taken: the server's URL comes from --server or HOOKD_URL
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if *target == "" {
		return usageErrorf(`e.g. hookd endpoint add acme --url https://example.com/webhooks`, "endpoint add: --url (the endpoint's URL) is required")
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	in := &svix.EndpointIn{Url: *target, FilterTypes: types, Channels: channels}
	if *uid != "" {
		in.Uid = uid
	}
	if *desc != "" {
		in.Description = desc
	}
	ep, err := c.sdk.Endpoint.CreateWithOptions(ctx, pos[0], in, once())
	if err != nil {
		return c.fail("add endpoint to "+pos[0], err)
	}
	if err := c.printEndpoint(ep); err != nil || c.json {
		return err
	}
	fmt.Fprintf(e.stdout, "\nIts signing secret: hookd endpoint secret %s %s\n", pos[0], ep.Id)
	return nil
}

func runEndpointList(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "endpoint list", "endpoint list APP [--limit N]\n\nLists the endpoints of the application APP (its id or uid)."+clientHelp)
	limit := limitFlag(f, "endpoints")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	if err := checkLimit(f, *limit); err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	fetch := func(it *string, n int32) (page[svix.EndpointOut], error) {
		l, err := c.sdk.Endpoint.List(ctx, pos[0], &svix.EndpointListOptions{Iterator: it, Limit: &n})
		if err != nil {
			return page[svix.EndpointOut]{}, err
		}
		return page[svix.EndpointOut]{l.Data, l.Done, l.Iterator.Get()}, nil
	}
	return printList(c, "endpoints of "+pos[0], *limit, fetch, []string{"ID", "UID", "URL", "STATE", "EVENT TYPES", "DESCRIPTION"},
		func(ep *svix.EndpointOut) []string {
			return []string{ep.Id, orDash(deref(ep.Uid)), ep.Url, endpointState(ep), joinOr(ep.FilterTypes, "all"), orDash(ep.Description)}
		})
}

// endpointArgs parses "APP EP" and the client flags of an endpoint subcommand.
func endpointArgs(e *env, name, usage string, args []string, extra func(f *flags)) (*conn, string, string, error) {
	f := newFlags(e, "endpoint "+name, usage+clientHelp)
	if extra != nil {
		extra(f)
	}
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP", "EP")
	if err != nil {
		return nil, "", "", err
	}
	c, err := cf.connect(e)
	if err != nil {
		return nil, "", "", err
	}
	return c, pos[0], pos[1], nil
}

func runEndpointGet(ctx context.Context, e *env, args []string) error {
	c, app, ep, err := endpointArgs(e, "get", "endpoint get APP EP\n\nShows one endpoint; APP and EP are ids or uids.", args, nil)
	if err != nil {
		return err
	}
	out, err := c.sdk.Endpoint.Get(ctx, app, ep)
	if err != nil {
		return c.fail("get endpoint "+ep, err)
	}
	return c.printEndpoint(out)
}

func runEndpointDisable(ctx context.Context, e *env, args []string) error {
	return setEndpointDisabled(ctx, e, "disable", args, true)
}

func runEndpointEnable(ctx context.Context, e *env, args []string) error {
	return setEndpointDisabled(ctx, e, "enable", args, false)
}

func setEndpointDisabled(ctx context.Context, e *env, verb string, args []string, disabled bool) error {
	about := "Stops delivering to the endpoint: new messages are not sent to it until it is enabled."
	if !disabled {
		about = `Resumes delivering to the endpoint. Messages that failed meanwhile can be sent
again with "hookd recover".`
	}
	c, app, ep, err := endpointArgs(e, verb, "endpoint "+verb+" APP EP\n\n"+about, args, nil)
	if err != nil {
		return err
	}
	out, err := c.sdk.Endpoint.Patch(ctx, app, ep, &svix.EndpointPatch{Disabled: &disabled})
	if err != nil {
		return c.fail(verb+" endpoint "+ep, err)
	}
	if c.json {
		return c.printJSON(out)
	}
	fmt.Fprintf(e.stdout, "endpoint %s (%s) is %s\n", out.Id, out.Url, endpointState(out))
	return nil
}

func runEndpointRotate(ctx context.Context, e *env, args []string) error {
	var show *bool
	c, app, ep, err := endpointArgs(e, "rotate-secret", "endpoint rotate-secret APP EP [--show-secret]\n\nReplaces the endpoint's signing secret with a new one the server generates.\nThe new secret is printed only with --show-secret; \"hookd endpoint secret\"\nprints it later.", args, func(f *flags) {
		show = f.Bool("show-secret", false, "print the new secret")
	})
	if err != nil {
		return err
	}
	if err := c.sdk.Endpoint.RotateSecretWithOptions(ctx, app, ep, &svix.EndpointSecretRotateIn{}, once()); err != nil {
		return c.fail("rotate the secret of endpoint "+ep, err)
	}
	out := map[string]any{"endpoint": ep, "rotated": true}
	if *show {
		s, err := c.sdk.Endpoint.GetSecret(ctx, app, ep)
		if err != nil {
			return c.fail("get the new secret of endpoint "+ep, err)
		}
		out["key"] = s.Key
	}
	if c.json {
		return c.printJSON(out)
	}
	if *show {
		fmt.Fprintln(e.stdout, out["key"])
		return nil
	}
	fmt.Fprintf(e.stdout, "rotated the signing secret of endpoint %s; \"hookd endpoint secret %s %s\" prints it\n", ep, app, ep)
	return nil
}

func runEndpointSecret(ctx context.Context, e *env, args []string) error {
	c, app, ep, err := endpointArgs(e, "secret", "endpoint secret APP EP\n\nPrints the endpoint's signing secret (whsec_...), which its receiver verifies with.", args, nil)
	if err != nil {
		return err
	}
	s, err := c.sdk.Endpoint.GetSecret(ctx, app, ep)
	if err != nil {
		return c.fail("get the secret of endpoint "+ep, err)
	}
	if c.json {
		return c.printJSON(map[string]string{"key": s.Key})
	}
	fmt.Fprintln(e.stdout, s.Key)
	return nil
}

func endpointState(ep *svix.EndpointOut) string {
	if ep.Disabled != nil && *ep.Disabled {
		return "disabled"
	}
	return "enabled"
}

func (c *conn) printEndpoint(ep *svix.EndpointOut) error {
	if c.json {
		return c.printJSON(ep)
	}
	rate := "-"
	if ep.RateLimit != nil {
		rate = strconv.Itoa(int(*ep.RateLimit)) + "/s"
	}
	c.printFields(
		[2]string{"id", ep.Id},
		[2]string{"uid", orDash(deref(ep.Uid))},
		[2]string{"url", ep.Url},
		[2]string{"state", endpointState(ep)},
		[2]string{"event types", joinOr(ep.FilterTypes, "all")},
		[2]string{"channels", joinOr(ep.Channels, "all")},
		[2]string{"description", orDash(ep.Description)},
		[2]string{"rate limit", rate},
		[2]string{"created", formatTime(ep.CreatedAt)},
		[2]string{"updated", formatTime(ep.UpdatedAt)},
	)
	return nil
}
