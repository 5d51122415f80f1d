package gosdk

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
	"github.com/svix/svix-webhooks/go/models"
	"github.com/svix/svix-webhooks/go/utils"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

const adminToken = "hookd_sk_gosdk_walk_token"

// walk is a running hookd API on a fresh SQLite file, a receiver, and the SDK pointed at the API.
type walk struct {
	ctx  context.Context
	recv *hookdtest.Receiver
	svix *svix.Svix
}

func setup(t *testing.T) *walk {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	t.Cleanup(func() { recv.Close(); store.Close() })
	client, err := hookd.NewClient(store, &hookd.Config{
		Delivery: &delivery.Config{
			Timeout:      2 * time.Second,
			AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		},
		RetrySchedule: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		client.Stop(sctx)
	})
	auth, _, err := server.NewTokenAuth(ctx, store, adminToken, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(client, &server.Config{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	sdk, err := svix.New(adminToken, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return &walk{ctx: ctx, recv: recv, svix: sdk}
}

func ptr[T any](v T) *T { return &v }

// status is the HTTP status of an SDK error, 0 for another error.
func status(err error) int {
	var e *svix.Error
	if errors.As(err, &e) {
		return e.Status()
	}
	return 0
}

// eventually polls ok every 20 ms until it holds or the walk's context ends.
func (w *walk) eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-w.ctx.Done():
			t.Fatalf("waiting for %s: %v", what, w.ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkEndpoint fails unless ep has the walk's filter, channel and rate, under both names.
func checkEndpoint(t *testing.T, what string, ep *models.EndpointOut, url string) {
	t.Helper()
	if ep.Url != url || !slices.Equal(ep.FilterTypes, []string{"invoice.paid"}) || !slices.Equal(ep.Channels, []string{"project_1"}) ||
		ep.ThrottleRate == nil || *ep.ThrottleRate != 10 || ep.RateLimit == nil || *ep.RateLimit != 10 || ep.Version != 1 ||
		ep.Uid == nil || *ep.Uid != "billing-hook" || ep.Metadata["team"] != "billing" {
		t.Fatalf("%s: %+v", what, ep)
	}
}

// TestWalk is what an application does with the SDK v1.99.1, from creating an application to
// deleting it, with the read-modify-write of an endpoint that once wiped its filter.
func TestWalk(t *testing.T) {
	w := setup(t)
	ctx, sdk := w.ctx, w.svix

	// Applications.
	app, err := sdk.Application.Create(ctx, models.ApplicationIn{Name: "Acme", Uid: ptr("acme"), ThrottleRate: ptr(uint16(50))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Uid == nil || *app.Uid != "acme" || app.ThrottleRate == nil || *app.ThrottleRate != 50 || app.RateLimit == nil || *app.RateLimit != 50 {
		t.Fatalf("application created: %+v", app)
	}
	got, err := sdk.Application.Get(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.Id != app.Id || !got.CreatedAt.Equal(app.CreatedAt) || got.CreatedAt.Nanosecond() != app.CreatedAt.Nanosecond() {
		t.Fatalf("application read: %+v, created %+v", got, app)
	}
	apps, err := sdk.Application.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Data) != 1 || apps.Data[0].Id != app.Id || !apps.Done {
		t.Fatalf("applications: %+v", apps)
	}

	// Event types.
	for _, name := range []string{"invoice.paid", "user.signup"} {
		if _, err := sdk.EventType.Create(ctx, models.EventTypeIn{Name: name, Description: "The " + name + " event"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	types, err := sdk.EventType.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(types.Data) != 2 {
		t.Fatalf("event types: %+v", types)
	}

	// An endpoint with a filter, a channel and a rate.
	ep, err := sdk.Endpoint.Create(ctx, app.Id, models.EndpointIn{
		Url: w.recv.URL("/first"), Uid: ptr("billing-hook"), Description: ptr("Billing"),
		FilterTypes: []string{"invoice.paid"}, Channels: []string{"project_1"}, ThrottleRate: ptr(uint16(10)),
		Metadata: &map[string]string{"team": "billing"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkEndpoint(t, "endpoint created", ep, w.recv.URL("/first"))
	read, err := sdk.Endpoint.Get(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	checkEndpoint(t, "endpoint read", read, w.recv.URL("/first"))
	if !read.CreatedAt.Equal(ep.CreatedAt) || read.CreatedAt.Nanosecond() != ep.CreatedAt.Nanosecond() {
		t.Fatalf("createdAt %s from the create, %s from a read", ep.CreatedAt, read.CreatedAt)
	}

	// Read-modify-write: Get, change the URL, Update with what Get returned, Get again.
	moved := w.recv.URL("/moved")
	updated, err := sdk.Endpoint.Update(ctx, app.Id, ep.Id, models.EndpointUpdate{
		Url: moved, Uid: read.Uid, Description: &read.Description, Disabled: read.Disabled,
		FilterTypes: read.FilterTypes, Channels: read.Channels, ThrottleRate: read.ThrottleRate,
		Metadata: &read.Metadata, Version: ptr(uint16(read.Version)),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEndpoint(t, "endpoint updated", updated, moved)
	again, err := sdk.Endpoint.Get(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	checkEndpoint(t, "endpoint read after the update", again, moved)

	// Patch one field; the others stay.
	patched, err := sdk.Endpoint.Patch(ctx, app.Id, ep.Id, models.EndpointPatch{Description: ptr("Billing, patched")})
	if err != nil {
		t.Fatal(err)
	}
	checkEndpoint(t, "endpoint patched", patched, moved)
	if patched.Description != "Billing, patched" {
		t.Fatalf("patched description %q", patched.Description)
	}
	list, err := sdk.Endpoint.List(ctx, app.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 {
		t.Fatalf("endpoints: %+v", list)
	}
	checkEndpoint(t, "endpoint listed", &list.Data[0], moved)

	// Messages: the filtered-out one goes nowhere, the other is delivered, signed with the secret.
	secret, err := sdk.Endpoint.GetSecret(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.recv.SetSecret("/moved", secret.Key); err != nil {
		t.Fatal(err)
	}
	skipped, err := sdk.Message.Create(ctx, app.Id, models.MessageIn{
		EventType: "user.signup", Channels: []string{"project_1"}, Payload: map[string]any{"user": "ada"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := sdk.Message.Create(ctx, app.Id, models.MessageIn{
		EventType: "invoice.paid", EventId: ptr("invoice-1001"), Channels: []string{"project_1"}, Payload: map[string]any{"invoice": 1001},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := w.recv.Wait(ctx, "/moved", 1)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := svix.NewWebhook(secret.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(reqs[0].Body, reqs[0].Header); err != nil || !reqs[0].Verified {
		t.Fatalf("delivery does not verify with the endpoint's secret: %v (receiver: %t)", err, reqs[0].Verified)
	}
	if reqs[0].Header.Get("webhook-id") != msg.Id {
		t.Fatalf("delivered %s, want message %s", reqs[0].Header.Get("webhook-id"), msg.Id)
	}
	none, err := sdk.MessageAttempt.ListAttemptedDestinations(ctx, app.Id, skipped.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Data) != 0 {
		t.Fatalf("the user.signup message went to %+v: the filter was lost", none.Data)
	}

	// Attempts, destinations and stats.
	w.eventually(t, "the attempt listed", func() bool {
		attempts, err := sdk.MessageAttempt.ListByMsg(ctx, app.Id, msg.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(attempts.Data) == 1 && attempts.Data[0].Status == models.MESSAGESTATUS_SUCCESS
	})
	byEndpoint, err := sdk.MessageAttempt.ListByEndpoint(ctx, app.Id, ep.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(byEndpoint.Data) != 1 || byEndpoint.Data[0].MsgId != msg.Id || byEndpoint.Data[0].ResponseStatusCode != 200 {
		t.Fatalf("attempts to the endpoint: %+v", byEndpoint)
	}
	dests, err := sdk.MessageAttempt.ListAttemptedDestinations(ctx, app.Id, msg.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dests.Data) != 1 || dests.Data[0].Id != ep.Id || !slices.Equal(dests.Data[0].FilterTypes, []string{"invoice.paid"}) ||
		dests.Data[0].RateLimit == nil || *dests.Data[0].RateLimit != 10 || dests.Data[0].Version != 1 {
		t.Fatalf("attempted destinations: %+v", dests)
	}
	stats, err := sdk.Endpoint.GetStats(ctx, app.Id, ep.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Success != 1 || stats.Fail != 0 {
		t.Fatalf("stats: %+v", stats)
	}

	// Secret rotation: a new key, and the next delivery verifies with it.
	if err := sdk.Endpoint.RotateSecret(ctx, app.Id, ep.Id, models.EndpointSecretRotateIn{}, nil); err != nil {
		t.Fatal(err)
	}
	rotated, err := sdk.Endpoint.GetSecret(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Key == secret.Key {
		t.Fatal("the secret did not change")
	}
	if _, err := sdk.Message.Create(ctx, app.Id, models.MessageIn{EventType: "invoice.paid", Channels: []string{"project_1"}, Payload: map[string]any{"invoice": 1002}}, nil); err != nil {
		t.Fatal(err)
	}
	if reqs, err = w.recv.Wait(ctx, "/moved", 2); err != nil {
		t.Fatal(err)
	}
	if wh, err = svix.NewWebhook(rotated.Key); err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(reqs[1].Body, reqs[1].Header); err != nil {
		t.Fatalf("the delivery after the rotation does not verify with the new secret: %v", err)
	}

	// Clearing the filter takes an explicit null, which the SDK's patch sends.
	cleared, err := sdk.Endpoint.Patch(ctx, app.Id, ep.Id, models.EndpointPatch{FilterTypes: utils.NewNullableFromPtr[[]string](nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cleared.FilterTypes != nil {
		t.Fatalf("filter after patching it to null: %v", cleared.FilterTypes)
	}

	// Delete.
	if err := sdk.Endpoint.Delete(ctx, app.Id, ep.Id); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Endpoint.Get(ctx, app.Id, ep.Id); status(err) != http.StatusNotFound {
		t.Fatalf("endpoint read after delete: %v", err)
	}
	if err := sdk.Application.Delete(ctx, app.Id); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Application.Get(ctx, app.Id); status(err) != http.StatusNotFound {
		t.Fatalf("application read after delete: %v", err)
	}
}
