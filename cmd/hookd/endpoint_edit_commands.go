package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	svix "github.com/svix/svix-webhooks/go"
)

// The endpoint subcommands that change or remove one endpoint (update, delete) or report on it
// (stats).

const endpointUpdateUsage = `endpoint update APP EP [--endpoint-url U] [--description D] [--event-type T ...]
       [--channel C ...] [--rate-limit N] [--scheme S] [--retry-schedule WAITS]
       [--attempt-timeout D] [--ordered[=false]]

Changes the endpoint EP of the application APP (ids or uids). Only the flags given change;
the rest (filter, channels, rate limit, metadata, state, headers, secret, scheme, retry
policy, ordering) stays as it is. --event-type and --channel replace the whole list: repeat them for several, or pass
--all-event-types / --all-channels to receive everything. --rate-limit 0 removes the limit.
Here --url is the server's, as in every other command.

`

func runEndpointUpdate(ctx context.Context, e *env, args []string) error {
	var (
		epURL, desc, scheme *string
		types, channels     stringList
		allTypes, allChans  *bool
		rate                *int
		given               = map[string]bool{}
		fl                  *flags
		rp                  *retryPolicyFlags
		ordered             *bool
	)
	c, app, ep, err := endpointArgs(e, "update", endpointUpdateUsage+schemeHelp+retryPolicyHelp+orderedHelp, args, func(f *flags) {
		epURL = f.String("endpoint-url", "", "the endpoint's new URL")
		// --url names the server everywhere but on endpoint add, where it is the endpoint's URL. Here
		// it is refused: a new endpoint URL given as --url would send the token to that host.
		f.String("url", "", "refused here: give the endpoint's URL with --endpoint-url and the server's with --server")
		desc = f.String("description", "", "the new description (\"\" clears it)")
		f.Var(&types, "event-type", "deliver only this event type; repeat for several (replaces the list)")
		allTypes = f.Bool("all-event-types", false, "deliver every event type (clears the event type filter)")
		f.Var(&channels, "channel", "deliver only messages on this channel; repeat for several (replaces the list)")
		allChans = f.Bool("all-channels", false, "deliver messages on every channel (clears the channel filter)")
		rate = f.Int("rate-limit", 0, "the most deliveries a second to this endpoint; 0 removes the limit")
		scheme = f.String("scheme", "", "how deliveries are signed: "+strings.Join(endpointSchemes, ", "))
		rp = addRetryPolicyFlags(f)
		ordered = f.Bool("ordered", false, "deliver one message at a time, in order (--ordered=false turns it off)")
		fl = f
	})
	if err != nil {
		return err
	}
	fl.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "server", "token", "json": // the connection's, not the endpoint's
		default:
			given[fl.Name] = true
		}
	})
	hint := `run "hookd endpoint update --help" for the flags`
	switch {
	case given["url"]:
		return usageErrorf("give the endpoint's new URL with --endpoint-url, and the server's (if not HOOKD_URL) with --server",
			"endpoint update: --url is ambiguous here, and nothing was sent")
	case len(given) == 0:
		return usageErrorf(hint+`; e.g. hookd endpoint update acme ep_... --endpoint-url https://example.com/new`, "endpoint update: nothing to change: pass at least one flag")
	case given["event-type"] && *allTypes:
		return usageErrorf(hint, "endpoint update: --event-type and --all-event-types contradict each other")
	case given["channel"] && *allChans:
		return usageErrorf(hint, "endpoint update: --channel and --all-channels contradict each other")
	case given["rate-limit"] && *rate < 0:
		return usageErrorf(hint, "endpoint update: --rate-limit must be 0 (no limit) or more, got %d", *rate)
	}
	if given["endpoint-url"] {
		if err := checkEndpointURL("endpoint update", *epURL); err != nil {
			return err
		}
	}
	policy, err := rp.fields("endpoint update", given)
	if err != nil {
		return err
	}
	if given["scheme"] {
		if *scheme == "" {
			return usageErrorf("use one of "+strings.Join(endpointSchemes, ", "), "endpoint update: --scheme is empty")
		}
		if err := checkScheme("endpoint update", *scheme); err != nil {
			return err
		}
	}

	// Read, change what was given, write the whole endpoint back: a PUT replaces every field of
	// EndpointUpdate, so each one not given is sent as read.
	op := "update endpoint " + ep
	cur, err := c.sdk.Endpoint.Get(ctx, app, ep)
	if err != nil {
		return c.failAt(ctx, op, target{app: app, endpoint: ep}, err)
	}
	upd := &svix.EndpointUpdate{
		Url: cur.Url, Uid: cur.Uid, Description: &cur.Description, Disabled: cur.Disabled,
		FilterTypes: cur.FilterTypes, Channels: cur.Channels, RateLimit: cur.RateLimit,
		Metadata: &cur.Metadata, Version: &cur.Version,
	}
	if given["endpoint-url"] {
		upd.Url = *epURL
	}
	if given["description"] {
		upd.Description = desc
	}
	switch {
	case given["event-type"]:
		upd.FilterTypes = types
	case *allTypes:
		upd.FilterTypes = nil
	}
	switch {
	case given["channel"]:
		upd.Channels = channels
	case *allChans:
		upd.Channels = nil
	}
	if given["rate-limit"] {
		upd.RateLimit = nil
		if *rate > 0 {
			upd.RateLimit = svix.Int32(int32(min(*rate, 1<<31-1)))
		}
	}
	body, err := upd.ToMap()
	if err != nil {
		return failf("", "%s: %v", op, err)
	}
	if given["scheme"] {
		body["scheme"] = *scheme // hookd's own field; absent, the endpoint keeps its scheme
	}
	for k, v := range policy { // hookd's own fields too; absent, they stay
		body[k] = v
	}
	if given["ordered"] {
		body["ordered"] = *ordered // hookd's own field too
	}
	out := &svix.EndpointOut{}
	if err := c.hookdCall(ctx, op, http.MethodPut, endpointPath(app, cur.Id), body, out); err != nil {
		return c.failAt(ctx, op, target{app: app, endpoint: ep}, err)
	}
	if given["event-type"] || given["endpoint-url"] {
		warnGuarded(ctx, e, out.Url)
	}
	own, err := c.endpointOwn(ctx, app, out.Id)
	if err != nil {
		return err
	}
	return c.printEndpoint(out, own)
}

// endpointOwn is what hookd alone writes of an endpoint, in today's shape only: its signing
// scheme, its retry policy (null: inherited) and whether it is ordered.
type endpointOwn struct {
	Scheme         string    `json:"scheme"`
	RetrySchedule  []float64 `json:"retrySchedule"`
	TimeoutSeconds *float64  `json:"timeoutSeconds"`
	Ordered        bool      `json:"ordered"`
}

// orderedHelp describes --ordered.
const orderedHelp = `Ordered delivery (--ordered, --ordered=false):
  --ordered  deliver to the endpoint one message at a time, in the order they were sent: a
             message waits until every earlier one is delivered, failed or cancelled (a
             failing message holds the later ones for its whole retry schedule). Manual
             resends are not held back. Default off.

`

// endpointOwn reads hookd's own fields of an endpoint.
func (c *conn) endpointOwn(ctx context.Context, app, id string) (*endpointOwn, error) {
	own := &endpointOwn{}
	if err := c.hookdCall(ctx, "get the scheme and retry policy of endpoint "+id, http.MethodGet, endpointPath(app, id), nil, own); err != nil {
		return nil, err
	}
	return own, nil
}

func runEndpointDelete(ctx context.Context, e *env, args []string) error {
	var yes *bool
	c, app, ep, err := endpointArgs(e, "delete", "endpoint delete APP EP [--yes]\n\nDeletes the endpoint EP of the application APP (ids or uids): nothing more is\ndelivered to it. It asks for confirmation on the terminal; --yes skips the question,\nand without a terminal (a script, a pipe) --yes is required.", args, func(f *flags) {
		yes = f.Bool("yes", false, "delete without asking")
	})
	if err != nil {
		return err
	}
	op := "delete endpoint " + ep
	cur, err := c.sdk.Endpoint.Get(ctx, app, ep)
	if err != nil {
		return c.failAt(ctx, op, target{app: app, endpoint: ep}, err)
	}
	if !*yes {
		ok, err := confirm(e, fmt.Sprintf("delete endpoint %s (%s) of application %s?", cur.Id, cur.Url, app))
		if err != nil {
			return err
		}
		if !ok {
			return failf("", "endpoint delete: not deleted; answer y to delete, or pass --yes")
		}
	}
	if err := c.sdk.Endpoint.Delete(ctx, app, cur.Id); err != nil {
		return c.failAt(ctx, op, target{app: app, endpoint: ep}, err)
	}
	if c.json {
		return c.printJSON(map[string]any{"id": cur.Id, "url": cur.Url, "deleted": true})
	}
	fmt.Fprintf(e.stdout, "deleted endpoint %s (%s)\n", cur.Id, cur.Url)
	return nil
}

// confirm asks question on stderr and reads the answer from stdin: true for y or yes. A stdin
// that is a file but not a terminal (a pipe, a redirect) is not asked: that is a usage error
// saying to pass --yes. A stdin that is not a file at all (Run's caller gave a reader) is read.
func confirm(e *env, question string) (bool, error) {
	if f, ok := e.stdin.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			return false, usageErrorf("pass --yes to confirm without a terminal", "%s: stdin is not a terminal, so there is no one to ask", strings.TrimSuffix(question, "?"))
		}
	}
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n') // EOF without an answer is a no
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}

func runEndpointStats(ctx context.Context, e *env, args []string) error {
	c, app, ep, err := endpointArgs(e, "stats", "endpoint stats APP EP\n\nShows how many of the endpoint's deliveries succeeded, failed, are pending or are\nbeing sent now, as the API's endpoint stats route counts them.", args, nil)
	if err != nil {
		return err
	}
	s, err := c.sdk.Endpoint.GetStats(ctx, app, ep)
	if err != nil {
		return c.failAt(ctx, "get the stats of endpoint "+ep, target{app: app, endpoint: ep}, err)
	}
	if c.json {
		return c.printJSON(s)
	}
	c.printFields(
		[2]string{"success", fmt.Sprint(s.Success)},
		[2]string{"fail", fmt.Sprint(s.Fail)},
		[2]string{"pending", fmt.Sprint(s.Pending)},
		[2]string{"sending", fmt.Sprint(s.Sending)},
	)
	return nil
}
