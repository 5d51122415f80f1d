package gosdk156

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/delivery"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

const adminToken = "hookd_sk_gosdk156_strict_token"

// TestStrictDecoders reads every shape whose fields changed across Svix's generations
// (applications, endpoints, attempts, attempted destinations, stats) with the SDK v1.56.0: its
// decoders fail on any field the 1.44 spec lacks.
func TestStrictDecoders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	recv := hookdtest.NewReceiver()
	t.Cleanup(func() { recv.Close(); store.Close() })
	client, err := hookd.NewClient(store, &hookd.Config{
		Delivery: &delivery.Config{Timeout: 2 * time.Second, AllowSubnets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
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
	sdk := svix.New(adminToken, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Timeout: 10 * time.Second}})

	app, err := sdk.Application.Create(ctx, &svix.ApplicationIn{Name: "Acme", Uid: svix.String("acme"), RateLimit: svix.Int32(50)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Application.Get(ctx, app.Id); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.Application.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// An endpoint's filter must name event types that exist; the strict EventTypeOut decodes too.
	if _, err := sdk.EventType.Create(ctx, &svix.EventTypeIn{
		Name: "invoice.paid", Description: "An invoice was paid", FeatureFlag: svix.String("beta"), GroupName: svix.String("billing"),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.EventType.List(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ep, err := sdk.Endpoint.Create(ctx, app.Id, &svix.EndpointIn{
		Url: recv.URL("/strict"), FilterTypes: []string{"invoice.paid"}, RateLimit: svix.Int32(10),
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sdk.Endpoint.Get(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := sdk.Endpoint.Update(ctx, app.Id, ep.Id, &svix.EndpointUpdate{
		Url: recv.URL("/strict-moved"), FilterTypes: got.FilterTypes, RateLimit: got.RateLimit, Version: &got.Version,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(updated.FilterTypes, []string{"invoice.paid"}) || updated.RateLimit == nil || *updated.RateLimit != 10 {
		t.Fatalf("updated %+v", updated)
	}
	if _, err := sdk.Endpoint.List(ctx, app.Id, nil); err != nil {
		t.Fatal(err)
	}
	msg, err := sdk.Message.Create(ctx, app.Id, &svix.MessageIn{EventType: "invoice.paid", Payload: map[string]any{"invoice": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recv.Wait(ctx, "/strict-moved", 1); err != nil {
		t.Fatal(err)
	}
	for {
		attempts, err := sdk.MessageAttempt.ListByMsg(ctx, app.Id, msg.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts.Data) == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := sdk.MessageAttempt.ListByEndpoint(ctx, app.Id, ep.Id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.MessageAttempt.ListAttemptedDestinations(ctx, app.Id, msg.Id, nil); err != nil {
		t.Fatal(err)
	}
	stats, err := sdk.Endpoint.GetStats(ctx, app.Id, ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Success != 1 {
		t.Fatalf("stats %+v", stats)
	}
}
