package server

import (
	"slices"
	"testing"

	svix "github.com/svix/svix-webhooks/go"
)

// The usual read-modify-write with the Go SDK v1.44.0 keeps the endpoint's filters: Get, change
// the URL, Update with what Get returned, Get again.
func TestEndpointReadModifyWriteWithSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "rmw")
	epEventTypes(t, b, "invoice.paid", "user.signup")
	created, err := b.svix.Endpoint.Create(b.ctx, "rmw", &svix.EndpointIn{
		Url: b.recv.URL("/rmw"), Uid: svix.String("rmw-ep"), Description: svix.String("billing"),
		FilterTypes: []string{"invoice.paid", "user.signup"}, Channels: []string{"project_1"},
		RateLimit: svix.Int32(5), Metadata: &map[string]string{"team": "billing"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.svix.Endpoint.Get(b.ctx, "rmw", created.Id)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := b.svix.Endpoint.Update(b.ctx, "rmw", got.Id, &svix.EndpointUpdate{
		Url: b.recv.URL("/rmw-moved"), Uid: got.Uid, Description: &got.Description, Disabled: got.Disabled,
		FilterTypes: got.FilterTypes, Channels: got.Channels, RateLimit: got.RateLimit,
		Metadata: &got.Metadata, Version: &got.Version,
	})
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.svix.Endpoint.Get(b.ctx, "rmw", created.Id)
	if err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]*svix.EndpointOut{"update": updated, "get after update": again} {
		if out.Url != b.recv.URL("/rmw-moved") || !slices.Equal(out.FilterTypes, []string{"invoice.paid", "user.signup"}) ||
			!slices.Equal(out.Channels, []string{"project_1"}) || out.RateLimit == nil || *out.RateLimit != 5 ||
			out.Description != "billing" || out.Metadata["team"] != "billing" || out.Uid == nil || *out.Uid != "rmw-ep" {
			t.Fatalf("%s: %+v", what, out)
		}
	}
	// The library sees the same endpoint: only the URL changed.
	ep, err := b.client.GetEndpoint(b.ctx, "rmw", created.Id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ep.EventTypes, []string{"invoice.paid", "user.signup"}) || ep.RateLimit != 5 {
		t.Fatalf("library sees %+v", ep)
	}
}
