package main

import (
	"context"
	"fmt"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

// The lifetimes hookd serve accepts for an app-portal token (AppPortalAccessIn.expiry).
const (
	minPortalExpiry = time.Hour
	maxPortalExpiry = 7 * 24 * time.Hour
)

// runPortalLink handles "hookd portal-link APP": it prints a link to the customer portal of one
// application, from the API's app-portal-access route.
func runPortalLink(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "portal-link", "portal-link APP [--read-only] [--expiry 24h]\n\nPrints a link to the customer portal of the application APP (its id or uid): the\nportal shows that application only, with a token of its own inside the link. Give\nit to the customer; whoever holds it has the token until it expires."+clientHelp)
	readOnly := f.Bool("read-only", false, "the portal may look but not change anything, send messages or read secrets")
	expiry := f.Duration("expiry", 0, "how long the link works, from 1h to 168h (default: the server's, seven days)")
	cf := addClientFlags(f)
	pos, err := f.parseArgs(args, "APP")
	if err != nil {
		return err
	}
	in := &svix.AppPortalAccessIn{}
	if *expiry != 0 {
		if *expiry < minPortalExpiry || *expiry > maxPortalExpiry {
			return usageErrorf("use --expiry from 1h to 168h (seven days)", "portal-link: --expiry %s is out of range", *expiry)
		}
		in.Expiry = svix.Int32(int32(*expiry / time.Second))
	}
	if *readOnly {
		in.ReadOnly = readOnly
	}
	c, err := cf.connect(e)
	if err != nil {
		return err
	}
	out, err := c.sdk.Authentication.AppPortalAccessWithOptions(ctx, pos[0], in, once())
	if err != nil {
		return c.failAt(ctx, "portal link of "+pos[0], target{app: pos[0]}, err)
	}
	if c.json {
		return c.printJSON(map[string]string{"url": out.Url, "token": out.Token})
	}
	fmt.Fprintln(e.stdout, out.Url)
	return nil
}
