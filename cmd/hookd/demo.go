package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/localclient"
	"github.com/hookd/hookd/hookdtest"
)

// demoEndpoint is one of the demo's four receivers.
type demoEndpoint struct {
	name string
	path string
	ep   *hookd.Endpoint
}

// runDemo handles "hookd demo": one event delivered to four local endpoints on the embedded
// default store, with no setup.
func runDemo(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "demo", "demo\n\nDelivers one event to four local endpoints on a temporary SQLite file and prints\nthe attempt log.")
	if err := f.parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "hookd-demo-")
	if err != nil {
		return failf("", "demo: %v", err)
	}
	defer os.RemoveAll(dir)
	out, err := demo(ctx, filepath.Join(dir, "demo.db"))
	if err != nil {
		return failf("", "demo: %v", err)
	}
	_, err = io.WriteString(e.stdout, out)
	return err
}

func demo(ctx context.Context, path string) (string, error) {
	recv := hookdtest.NewReceiver()
	defer recv.Close()
	recv.Handle("/a", hookdtest.OK())
	recv.Handle("/b", hookdtest.FailTimes(2, 503, "upstream busy"))
	recv.Handle("/c", hookdtest.Hang())
	recv.Handle("/d", hookdtest.Gone("this endpoint was removed"))

	c, stop, err := localclient.Open(ctx, path, localclient.Config(300*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		return "", err
	}
	defer stop()
	app, err := c.CreateApplication(ctx, &hookd.ApplicationIn{Name: "demo", UID: "demo"})
	if err != nil {
		return "", err
	}
	eps := []*demoEndpoint{{name: "ep_a", path: "/a"}, {name: "ep_b", path: "/b"}, {name: "ep_c", path: "/c"}, {name: "ep_d", path: "/d"}}
	for _, d := range eps {
		d.ep, err = c.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: recv.URL(d.path), Description: d.name})
		if err != nil {
			return "", err
		}
		secret, err := c.EndpointSecret(ctx, app.ID, d.ep.ID)
		if err != nil {
			return "", err
		}
		if err := recv.SetSecret(d.path, secret); err != nil {
			return "", err
		}
	}
	res, err := c.Send(ctx, app.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"invoice": "in_1001", "amount": 4200, "currency": "eur"}})
	if err != nil {
		return "", err
	}
	states, err := waitSettled(ctx, c, app.ID, res.Message.ID, eps)
	if err != nil {
		return "", err
	}

	b := new(strings.Builder)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "endpoint\ttry\tresult\tresponse")
	for _, d := range eps {
		page, err := c.ListAttempts(ctx, app.ID, hookd.AttemptFilter{MessageID: res.Message.ID, EndpointID: d.ep.ID, ListOptions: hookd.ListOptions{Limit: 250}})
		if err != nil {
			return "", err
		}
		for i := len(page.Data) - 1; i >= 0; i-- {
			a := page.Data[i]
			result := a.Error
			if a.StatusCode != 0 {
				result = fmt.Sprint(a.StatusCode)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", d.name, a.Number, result, a.Response)
		}
	}
	tw.Flush()
	fmt.Fprint(b, "\ndeliveries:")
	var disabled []string
	for i, d := range eps {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(b, "%s %s %s", sep, d.name, states[i])
		got, err := c.GetEndpoint(ctx, app.ID, d.ep.ID)
		if err != nil {
			return "", err
		}
		if got.Disabled {
			disabled = append(disabled, d.name)
		}
	}
	fmt.Fprintf(b, "\nendpoints disabled: %s\n", joinOr(disabled, "none"))
	reqs := recv.Requests("")
	verified := true
	ids := map[string]bool{}
	for _, r := range reqs {
		verified = verified && r.Verified
		ids[r.WebhookID] = true
	}
	fmt.Fprintf(b, "requests received: %d, all verified: %t, distinct webhook-id values: %d\n", len(reqs), verified, len(ids))
	return b.String(), nil
}

// waitSettled waits until no delivery of the message is pending and returns their states.
func waitSettled(ctx context.Context, c *hookd.Client, app, msg string, eps []*demoEndpoint) ([]hookd.DeliveryStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	states := make([]hookd.DeliveryStatus, len(eps))
	for {
		settled := true
		for i, d := range eps {
			dl, err := c.Store().GetDeliveryFor(ctx, msg, d.ep.ID)
			if err != nil {
				return nil, err
			}
			states[i] = dl.Status
			settled = settled && dl.Status != hookd.DeliveryPending
		}
		if settled {
			return states, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("deliveries still pending: %v", states)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
