package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd/delivery"
)

// runEndpoint handles "hookd endpoint add|list|get|update|delete|stats|scheme|disable|enable|
// rotate-secret|secret".
func runEndpoint(ctx context.Context, e *env, args []string) error {
	return runGroup(ctx, e, "endpoint", "Manages an application's endpoints: the URLs its messages are delivered to.", []subcommand{
		{"add", "add an endpoint (endpoint add APP --endpoint-url URL [--event-type T ...] [--scheme S])", runEndpointAdd},
		{"list", "list an application's endpoints (endpoint list APP)", runEndpointList},
		{"get", "show one endpoint (endpoint get APP EP)", runEndpointGet},
		{"update", "change an endpoint's URL, description, filter, channels, rate limit or scheme (endpoint update APP EP --flag ...)", runEndpointUpdate},
		{"delete", "delete an endpoint, after asking (endpoint delete APP EP [--yes])", runEndpointDelete},
		{"stats", "count an endpoint's deliveries by state (endpoint stats APP EP)", runEndpointStats},
		{"scheme", "change how an endpoint's deliveries are signed (endpoint scheme APP EP SCHEME)", runEndpointScheme},
		{"disable", "stop delivering to an endpoint (endpoint disable APP EP)", runEndpointDisable},
		{"enable", "resume delivering to an endpoint (endpoint enable APP EP)", runEndpointEnable},
		{"rotate-secret", "replace an endpoint's signing secret (endpoint rotate-secret APP EP [--show-secret])", runEndpointRotate},
		{"secret", "print an endpoint's signing secret (endpoint secret APP EP)", runEndpointSecret},
	}, args)
}

// legacyURLWarning is what endpoint add says on stderr when the endpoint's URL comes from --url.
const legacyURLWarning = "hookd: warning: --url is the endpoint's URL here for compatibility; use --endpoint-url, and --server for the server\n"

func runEndpointAdd(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "endpoint add", "endpoint add APP --endpoint-url URL [--event-type T ...] [--channel C ...] [--uid U] [--description D] [--scheme S]\n       [--retry-schedule WAITS] [--attempt-timeout D] [--ordered]\n\nAdds an endpoint to the application APP (its id or uid). Without --event-type\nit receives every event type; without --channel, every channel. The server's\nURL is --server (or HOOKD_URL); here --url is the endpoint's URL, as\n--endpoint-url is, for scripts written before --endpoint-url.\n\n"+schemeHelp+retryPolicyHelp+orderedHelp+clientHelp)
	epURL := f.String("endpoint-url", "", "the endpoint's URL, where messages are POSTed (required)")
	legacyURL := f.String("url", "", "the endpoint's URL, as --endpoint-url (kept for compatibility; warns)")
	var types, channels stringList
	f.Var(&types, "event-type", "deliver only this event type; repeat for several (default: all)")
	f.Var(&channels, "channel", "deliver only messages on this channel; repeat for several (default: all)")
	uid := f.String("uid", "", "your unique id for the endpoint within the application (optional)")
	desc := f.String("description", "", "a description shown in lists (optional)")
	scheme := f.String("scheme", "", "how deliveries are signed: "+strings.Join(endpointSchemes, ", ")+" (default standard)")
	rp := addRetryPolicyFlags(f)
	ordered := f.Bool("ordered", false, "deliver one message at a time, in order (default off)")
	cf := addClientFlags(f) // --url is taken: the server's URL comes from --server or HOOKD_URL
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	switch {
	case *legacyURL != "" && *epURL != "":
		return usageErrorf("give the endpoint's URL once, with --endpoint-url, and the server's with --server", "endpoint add: both --url and --endpoint-url name the endpoint's URL")
	case *legacyURL != "":
		fmt.Fprint(e.stderr, legacyURLWarning)
		epURL = legacyURL
	case *epURL == "":
		return usageErrorf(`e.g. hookd endpoint add acme --endpoint-url https://example.com/webhooks`, "endpoint add: --endpoint-url (the endpoint's URL) is required")
	}
	if err := checkEndpointURL("endpoint add", *epURL); err != nil {
		return err
	}
	if err := checkScheme("endpoint add", *scheme); err != nil {
		return err
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	policy, err := rp.fields("endpoint add", given)
	if err != nil {
		return err
	}
	if given["ordered"] {
		policy["ordered"] = *ordered // hookd's own field, sent beside the retry policy
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	in := &svix.EndpointIn{Url: *epURL, FilterTypes: types, Channels: channels}
	if *uid != "" {
		in.Uid = uid
	}
	if *desc != "" {
		in.Description = desc
	}
	var ep *svix.EndpointOut
	if *scheme == "" && len(policy) == 0 {
		ep, err = c.sdk.Endpoint.CreateWithOptions(ctx, pos[0], in, once())
		if err != nil {
			return c.failAt(ctx, "add endpoint to "+pos[0], target{app: pos[0]}, err)
		}
	} else {
		// The SDK's EndpointIn has neither scheme, retry policy nor ordered: the same body with
		// them, in one request.
		body, err := in.ToMap()
		if err != nil {
			return failf("", "add endpoint to %s: %v", pos[0], err)
		}
		if *scheme != "" {
			body["scheme"] = *scheme
		}
		for k, v := range policy {
			body[k] = v
		}
		ep = &svix.EndpointOut{}
		if err := c.hookdCall(ctx, "add endpoint to "+pos[0], http.MethodPost, "/api/v1/app/"+url.PathEscape(pos[0])+"/endpoint", body, ep); err != nil {
			return c.failAt(ctx, "add endpoint to "+pos[0], target{app: pos[0]}, err)
		}
	}
	warnGuarded(ctx, e, *epURL)
	own := &endpointOwn{Scheme: cmpOr(*scheme, "standard")}
	if len(policy) > 0 {
		if own, err = c.endpointOwn(ctx, pos[0], ep.Id); err != nil {
			return err
		}
	}
	if err := c.printEndpoint(ep, own); err != nil || c.json {
		return err
	}
	fmt.Fprintf(e.stdout, "\nIts signing secret: hookd endpoint secret %s %s\n", pos[0], ep.Id)
	return nil
}

// checkEndpointURL refuses an endpoint URL that is not an absolute http(s) URL, saying what is
// missing; the server checks the rest.
func checkEndpointURL(cmd, raw string) error {
	if _, err := parseHTTPURL(raw); err != nil {
		return usageErrorf("give the whole URL, e.g. --endpoint-url https://example.com/webhooks", "%s: the endpoint URL %v", cmd, err)
	}
	return nil
}

// guardLookupTimeout bounds the lookup of warnGuarded: a slow resolver delays the command by
// at most this much, and then it says nothing.
const guardLookupTimeout = 2 * time.Second

// warnGuarded notes on stderr when the host of the endpoint URL raw is, or resolves here to, an
// address that the SSRF guard of hookd serve refuses unless --allow-subnets allows it: then every
// attempt to it fails. The CLI cannot see the server's flags, so the note names the condition
// ("unless hookd serve allows it") and the flag that meets it. A host that does not resolve in
// time gets no note; the server's resolver may answer differently, and the guard judges the
// address it dials.
func warnGuarded(ctx context.Context, e *env, raw string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, guardLookupTimeout)
		defer cancel()
		addrs, _ = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	for _, ip := range addrs {
		if delivery.CheckAddress(ip, nil) == nil {
			continue
		}
		class, prefix := delivery.AddressRange(ip)
		what := host + " is " + class
		if ip.String() != host {
			what = host + " resolves to " + ip.String() + ", " + class
		}
		fmt.Fprintf(e.stderr, "hookd: note: %s, which hookd serve refuses by default: unless it was started with --allow-subnets %s (or a range holding it), every attempt to this endpoint fails\n", what, prefix)
		return
	}
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
	return printList(ctx, c, "endpoints of "+pos[0], target{app: pos[0]}, *limit, fetch, []string{"ID", "UID", "URL", "STATE", "EVENT TYPES", "DESCRIPTION"},
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
		return c.failAt(ctx, "get endpoint "+ep, target{app: app, endpoint: ep}, err)
	}
	own, err := c.endpointOwn(ctx, app, out.Id)
	if err != nil {
		return err
	}
	return c.printEndpoint(out, own)
}

// schemeHelp describes the signing schemes.
const schemeHelp = `Signing schemes (--scheme):
  standard  Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature, and
            the same under svix-* unless hookd serve --signature-headers says otherwise
  svix      the same signature under svix-id, svix-timestamp, svix-signature alone
  stripe    Stripe-shaped: Stripe-Signature (and X-Webhook-Signature) t=<unix>,v1=<hex>,
            an HMAC-SHA256 keyed with the whole secret string, whsec_ included, as
            stripe.webhooks.constructEvent expects
  envelope  stripe's signature over the body {"id","type","occurredAt","data"}`

// endpointSchemes are the values of an endpoint's scheme.
var endpointSchemes = []string{"standard", "svix", "stripe", "envelope"}

// checkScheme refuses a --scheme hookd does not know ("" is the default).
func checkScheme(cmd, scheme string) error {
	if scheme == "" || slices.Contains(endpointSchemes, scheme) {
		return nil
	}
	return usageErrorf("use one of "+strings.Join(endpointSchemes, ", "), "%s: unknown scheme %q", cmd, scheme)
}

func runEndpointScheme(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "endpoint scheme", "endpoint scheme APP EP SCHEME\n\nChanges how the endpoint's deliveries are signed; APP and EP are ids or uids.\nA secret that cannot sign with SCHEME (plain text moving to standard) is refused:\nrotate it first (hookd endpoint rotate-secret).\n\n"+schemeHelp+clientHelp)
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP", "EP", "SCHEME")
	if err != nil {
		return err
	}
	if err := checkScheme("endpoint scheme", pos[2]); err != nil {
		return err
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	out := &svix.EndpointOut{}
	if err := c.hookdCall(ctx, "change the scheme of endpoint "+pos[1], http.MethodPatch, endpointPath(pos[0], pos[1]), map[string]string{"scheme": pos[2]}, out); err != nil {
		return c.failAt(ctx, "change the scheme of endpoint "+pos[1], target{app: pos[0], endpoint: pos[1]}, err)
	}
	if c.json {
		own, err := c.endpointOwn(ctx, pos[0], out.Id)
		if err != nil {
			return err
		}
		return c.printEndpoint(out, own)
	}
	fmt.Fprintf(e.stdout, "endpoint %s (%s) is signed with the %s scheme\n", out.Id, out.Url, pos[2])
	return nil
}

func endpointPath(app, ep string) string {
	return "/api/v1/app/" + url.PathEscape(app) + "/endpoint/" + url.PathEscape(ep)
}

// hookdCall calls a route of hookd's API directly, for hookd's own fields: in (nil: no body) is
// sent as JSON and the answer decoded into out. A *svix.EndpointOut asks for 1.44's shape, the
// one the SDK's types read. op names what was attempted in the error.
func (c *conn) hookdCall(ctx context.Context, op, method, path string, in, out any) error {
	status, b, err := c.hookdRequest(ctx, method, path, in, out)
	if err != nil {
		return c.fail(op, err)
	}
	if status >= 300 {
		return apiFailure(op, status, b, nil)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return apiFailure(op, status, b, err)
	}
	return nil
}

// hookdRequest sends one request of hookdCall and returns the answer's status and body (its
// first MiB); err is an error of the transport (or of in's encoding), with no answer.
func (c *conn) hookdRequest(ctx context.Context, method, path string, in, out any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.origin+path, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	switch out.(type) {
	case *svix.EndpointOut, *svix.ApplicationOut: // the SDK's models refuse fields they don't know
		req.Header.Set("X-Hookd-Api-Generation", "1.44")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, b, nil
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
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
		return c.failAt(ctx, verb+" endpoint "+ep, target{app: app, endpoint: ep}, err)
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
		return c.failAt(ctx, "rotate the secret of endpoint "+ep, target{app: app, endpoint: ep}, err)
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
		return c.failAt(ctx, "get the secret of endpoint "+ep, target{app: app, endpoint: ep}, err)
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

// printEndpoint prints ep with hookd's own fields.
func (c *conn) printEndpoint(ep *svix.EndpointOut, own *endpointOwn) error {
	if c.json {
		m, err := ep.ToMap()
		if err != nil {
			return c.printJSON(ep)
		}
		m["scheme"], m["retrySchedule"], m["timeoutSeconds"] = own.Scheme, own.RetrySchedule, own.TimeoutSeconds
		m["ordered"] = own.Ordered
		return c.printJSON(m)
	}
	schedule, timeout := formatPolicy(own.RetrySchedule, own.TimeoutSeconds)
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
		[2]string{"scheme", orDash(own.Scheme)},
		[2]string{"retry schedule", schedule},
		[2]string{"attempt timeout", timeout},
		[2]string{"ordered", yesNo(own.Ordered)},
		[2]string{"created", formatTime(ep.CreatedAt)},
		[2]string{"updated", formatTime(ep.UpdatedAt)},
	)
	return nil
}
