package server

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

// epTestApp creates an application through the library, so that these tests need only the
// endpoint routes.
func epTestApp(t *testing.T, b *bundle, uid string) *hookd.Application {
	t.Helper()
	a, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Acme " + uid, UID: uid})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// epReadJSON checks the status and Content-Type of resp and decodes its JSON object.
func epReadJSON(t *testing.T, resp *http.Response, status int) map[string]any {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json", ct)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return out
}

// epSvixStatus returns the HTTP status of an error of the Svix SDK (0 if it is none).
func epSvixStatus(err error) int {
	var se *svix.Error
	if errors.As(err, &se) {
		return se.Status()
	}
	return 0
}

func TestEndpointCRUDWithSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	app := epTestApp(t, b, "crud")
	epEventTypes(t, b, "invoice.paid", "user.signup", "order.created")
	ctx := b.ctx

	created, err := b.svix.Endpoint.Create(ctx, "crud", &svix.EndpointIn{
		Url:         b.recv.URL("/crud"),
		Uid:         svix.String("ep-one"),
		Description: svix.String("first"),
		FilterTypes: []string{"invoice.paid", "invoice.paid", "user.signup"},
		Channels:    []string{"project_1"},
		RateLimit:   svix.Int32(5),
		Metadata:    &map[string]string{"team": "billing"},
		Version:     svix.Int32(2),
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Url != b.recv.URL("/crud") || *created.Uid != "ep-one" || created.Description != "first" ||
		created.Version != 2 || *created.RateLimit != 5 || created.Metadata["team"] != "billing" {
		t.Fatalf("created %+v", created)
	}
	if !slices.Equal(created.FilterTypes, []string{"invoice.paid", "user.signup"}) || !slices.Equal(created.Channels, []string{"project_1"}) {
		t.Fatalf("filters %v %v", created.FilterTypes, created.Channels)
	}
	if created.Disabled == nil || *created.Disabled {
		t.Fatalf("disabled %v", created.Disabled)
	}

	// By id and by uid, with the application by id and by uid.
	for _, ids := range [][2]string{{app.ID, created.Id}, {"crud", "ep-one"}} {
		got, err := b.svix.Endpoint.Get(ctx, ids[0], ids[1])
		if err != nil {
			t.Fatal(err)
		}
		if got.Id != created.Id || !got.CreatedAt.Equal(created.CreatedAt) {
			t.Fatalf("get %v: %+v", ids, got)
		}
	}

	// PUT replaces: what is absent takes its default.
	updated, err := b.svix.Endpoint.Update(ctx, "crud", "ep-one", &svix.EndpointUpdate{
		Url: b.recv.URL("/crud2"), Uid: svix.String("ep-one"), Description: svix.String("second"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Url != b.recv.URL("/crud2") || updated.Description != "second" || updated.FilterTypes != nil ||
		updated.Channels != nil || updated.RateLimit != nil || len(updated.Metadata) != 0 || updated.Version != 1 {
		t.Fatalf("updated %+v", updated)
	}

	// PATCH changes only what it is given.
	patched, err := b.svix.Endpoint.Patch(ctx, "crud", created.Id, &svix.EndpointPatch{
		FilterTypes: []string{"order.created"},
		RateLimit:   *svix.NullableInt32(svix.Int32(9)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Description != "second" || patched.Url != b.recv.URL("/crud2") || *patched.RateLimit != 9 ||
		!slices.Equal(patched.FilterTypes, []string{"order.created"}) || *patched.Uid != "ep-one" {
		t.Fatalf("patched %+v", patched)
	}
	yes := true
	disabled, err := b.svix.Endpoint.Patch(ctx, "crud", created.Id, &svix.EndpointPatch{Disabled: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if !*disabled.Disabled {
		t.Fatal("PATCH disabled: true did not disable")
	}
	if ep, _ := b.client.GetEndpoint(ctx, app.ID, created.Id); !ep.Disabled || ep.DisabledReason != "manual" {
		t.Fatalf("library sees %+v", ep)
	}

	// List pages with the iterator, newest first by default as Svix's server does.
	second, err := b.svix.Endpoint.Create(ctx, "crud", &svix.EndpointIn{Url: b.recv.URL("/two")})
	if err != nil {
		t.Fatal(err)
	}
	page1, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(page1.Data) != 1 || page1.Data[0].Id != second.Id || page1.Done || page1.Iterator.Get() == nil {
		t.Fatalf("page 1: %+v", page1)
	}
	page2, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1), Iterator: page1.Iterator.Get()})
	if err != nil {
		t.Fatal(err)
	}
	if len(page2.Data) != 1 || page2.Data[0].Id != created.Id || !page2.Done || page2.PrevIterator == nil {
		t.Fatalf("page 2: %+v", page2)
	}
	// The page before page 2 is page 1 again.
	back, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1), Iterator: page2.PrevIterator})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Data) != 1 || back.Data[0].Id != second.Id {
		t.Fatalf("page before page 2: %+v", back)
	}
	// order=ascending: oldest first, paged the same way.
	asc := svix.Ordering("ascending")
	apage1, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1), Order: &asc})
	if err != nil {
		t.Fatal(err)
	}
	if len(apage1.Data) != 1 || apage1.Data[0].Id != created.Id || apage1.Done {
		t.Fatalf("ascending page 1: %+v", apage1)
	}
	apage2, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1), Order: &asc, Iterator: apage1.Iterator.Get()})
	if err != nil {
		t.Fatal(err)
	}
	if len(apage2.Data) != 1 || apage2.Data[0].Id != second.Id || !apage2.Done {
		t.Fatalf("ascending page 2: %+v", apage2)
	}
	// Explicit order=descending is the default.
	dpage1, err := b.svix.Endpoint.List(ctx, "crud", &svix.EndpointListOptions{Limit: svix.Int32(1), Order: svix.Ordering("descending").Ptr()})
	if err != nil {
		t.Fatal(err)
	}
	if len(dpage1.Data) != 1 || dpage1.Data[0].Id != second.Id || dpage1.Done {
		t.Fatalf("descending page 1: %+v", dpage1)
	}

	if err := b.svix.Endpoint.Delete(ctx, "crud", "ep-one"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svix.Endpoint.Get(ctx, "crud", created.Id); epSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("get after delete: %v", err)
	}
	if err := b.svix.Endpoint.Delete(ctx, "crud", created.Id); epSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("second delete: %v", err)
	}
}

// The strict Go SDKs get exactly the 1.44 spec's fields; every other client every field Svix's
// server writes, both names of the filter and the rate and version included. Either generation's
// names are accepted.
func TestEndpointGenerations(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "gen")
	epEventTypes(t, b, "a.b", "c.d")
	current := []string{"channels", "createdAt", "description", "disabled", "eventTypes", "filterTypes", "id", "metadata", "ordered", "rateLimit", "retrySchedule", "scheme", "throttleRate", "timeoutSeconds", "uid", "updatedAt", "url", "version"}
	v144 := []string{"channels", "createdAt", "description", "disabled", "filterTypes", "id", "metadata", "rateLimit", "uid", "updatedAt", "url", "version"}

	out := epReadJSON(t, b.do(t, "POST", "/api/v1/app/gen/endpoint",
		`{"url":"https://example.com/a","eventTypes":["a.b"],"throttleRate":3}`), http.StatusCreated)
	if got := slices.Sorted(maps.Keys(out)); !slices.Equal(got, current) {
		t.Fatalf("current fields %v, want %v", got, current)
	}
	if out["throttleRate"] != 3.0 || out["rateLimit"] != 3.0 || out["eventTypes"].([]any)[0] != "a.b" ||
		out["filterTypes"].([]any)[0] != "a.b" || out["version"] != 1.0 || out["uid"] != nil {
		t.Fatalf("current out %v", out)
	}
	id := out["id"].(string)
	for _, ua := range []string{"svix-libs/1.99.1/go go/go1.26.0", "svix-libs/1.57.0/go", "svix-libs/1.44.0/python", "svix-libs/1.99.1/javascript"} {
		got := epReadJSON(t, b.do(t, "GET", "/api/v1/app/gen/endpoint/"+id, "", "User-Agent", ua), http.StatusOK)
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, current) {
			t.Fatalf("%s: fields %v, want %v", ua, keys, current)
		}
	}
	for _, h := range [][]string{{"X-Hookd-Api-Generation", "1.44"}, {"User-Agent", "svix-libs/1.44.0/go"}, {"User-Agent", "svix-libs/1.56.0/go"}} {
		old := epReadJSON(t, b.do(t, "GET", "/api/v1/app/gen/endpoint/"+id, "", h...), http.StatusOK)
		if got := slices.Sorted(maps.Keys(old)); !slices.Equal(got, v144) {
			t.Fatalf("1.44 fields %v, want %v", got, v144)
		}
		if old["rateLimit"] != 3.0 || old["filterTypes"].([]any)[0] != "a.b" || old["version"] != 1.0 {
			t.Fatalf("1.44 out %v", old)
		}
	}
	// 1.44 names in, current names out.
	out = epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/gen/endpoint/"+id, `{"filterTypes":["c.d"],"rateLimit":7}`), http.StatusOK)
	if out["throttleRate"] != 7.0 || out["rateLimit"] != 7.0 || out["eventTypes"].([]any)[0] != "c.d" || out["filterTypes"].([]any)[0] != "c.d" {
		t.Fatalf("patched %v", out)
	}
	// Stats and recover differ by generation too.
	stats := epReadJSON(t, b.do(t, "GET", "/api/v1/app/gen/endpoint/"+id+"/stats", ""), http.StatusOK)
	if got := slices.Sorted(maps.Keys(stats)); !slices.Equal(got, []string{"canceled", "fail", "pending", "sending", "success"}) {
		t.Fatalf("current stats %v", got)
	}
	stats = epReadJSON(t, b.do(t, "GET", "/api/v1/app/gen/endpoint/"+id+"/stats", "", "X-Hookd-Api-Generation", "1.44"), http.StatusOK)
	if got := slices.Sorted(maps.Keys(stats)); !slices.Equal(got, []string{"fail", "pending", "sending", "success"}) {
		t.Fatalf("1.44 stats %v", got)
	}
	rec := epReadJSON(t, b.do(t, "POST", "/api/v1/app/gen/endpoint/"+id+"/recover", `{"since":"2020-01-01T00:00:00Z","until":"2020-01-02T00:00:00Z"}`), http.StatusAccepted)
	if got := slices.Sorted(maps.Keys(rec)); !slices.Equal(got, []string{"id", "status", "task", "updatedAt"}) || rec["task"] != "endpoint.recover" {
		t.Fatalf("current recover %v", rec)
	}
	rec = epReadJSON(t, b.do(t, "POST", "/api/v1/app/gen/endpoint/"+id+"/recover", `{"since":"2020-01-01T00:00:00Z","until":"2020-01-02T00:00:00Z"}`, "X-Hookd-Api-Generation", "1.44"), http.StatusAccepted)
	if got := slices.Sorted(maps.Keys(rec)); !slices.Equal(got, []string{"id", "status", "task"}) || rec["status"] != "running" {
		t.Fatalf("1.44 recover %v", rec)
	}
}

// JSON null in a PATCH sets a field back to its default; the Go SDK cannot send it.
func TestEndpointPatchNull(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "nulls")
	epEventTypes(t, b, "a")
	out := epReadJSON(t, b.do(t, "POST", "/api/v1/app/nulls/endpoint", `{"url":"https://example.com/a","uid":"u1",
		"description":"d","eventTypes":["a"],"channels":["c"],"throttleRate":4,"metadata":{"k":"v"},"disabled":true}`), http.StatusCreated)
	if out["disabled"] != true {
		t.Fatalf("created %v", out)
	}
	path := "/api/v1/app/nulls/endpoint/u1"
	out = epReadJSON(t, b.do(t, "PATCH", path, `{"uid":null,"description":null,"eventTypes":null,"channels":null,
		"throttleRate":null,"metadata":null,"disabled":null}`), http.StatusOK)
	want := map[string]any{"uid": nil, "description": "", "eventTypes": nil, "channels": nil, "throttleRate": nil, "disabled": false}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %v, want %v", k, out[k], v)
		}
	}
	if len(out["metadata"].(map[string]any)) != 0 || out["url"] != "https://example.com/a" {
		t.Fatalf("patched %v", out)
	}
	id := out["id"].(string)
	// The uid is gone: the endpoint answers by id only.
	epReadJSON(t, b.do(t, "GET", path, ""), http.StatusNotFound)
	epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/nulls/endpoint/"+id, `{"url":null}`), http.StatusUnprocessableEntity)
	// An empty PATCH changes nothing.
	same := epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/nulls/endpoint/"+id, `{}`), http.StatusOK)
	if same["url"] != "https://example.com/a" {
		t.Fatalf("empty patch: %v", same)
	}
	// throttleRate 0 in a PATCH clears it too.
	epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/nulls/endpoint/"+id, `{"throttleRate":8}`), http.StatusOK)
	out = epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/nulls/endpoint/"+id, `{"throttleRate":0}`), http.StatusOK)
	if out["throttleRate"] != nil {
		t.Fatalf("throttleRate 0: %v", out["throttleRate"])
	}
}

// A PUT to a uid that names no endpoint creates it, as Svix does.
func TestEndpointPutCreates(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "upsert")
	ep, err := b.svix.Endpoint.Update(b.ctx, "upsert", "new-uid", &svix.EndpointUpdate{Url: "https://example.com/new"})
	if err != nil {
		t.Fatal(err)
	}
	if *ep.Uid != "new-uid" {
		t.Fatalf("uid %v", ep.Uid)
	}
	resp := b.do(t, "PUT", "/api/v1/app/upsert/endpoint/other-uid", `{"url":"https://example.com/x"}`)
	epReadJSON(t, resp, http.StatusCreated)
	resp = b.do(t, "PUT", "/api/v1/app/upsert/endpoint/new-uid", `{"url":"https://example.com/y"}`)
	if out := epReadJSON(t, resp, http.StatusOK); out["id"] != ep.Id || out["uid"] != nil {
		t.Fatalf("second PUT %v", out)
	}
	// An id that names nothing is not a uid to create.
	epReadJSON(t, b.do(t, "PUT", "/api/v1/app/upsert/endpoint/ep_nothing", `{"url":"https://example.com/z"}`), http.StatusNotFound)
}

func TestEndpointHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "hdr")
	ep, err := b.svix.Endpoint.Create(b.ctx, "hdr", &svix.EndpointIn{Url: b.recv.URL("/hdr")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := b.svix.Endpoint.GetHeaders(b.ctx, "hdr", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Headers) != 0 || len(h.Sensitive) != 0 {
		t.Fatalf("new endpoint headers %+v", h)
	}
	err = b.svix.Endpoint.UpdateHeaders(b.ctx, "hdr", ep.Id, &svix.EndpointHeadersIn{
		Headers: map[string]string{"X-Tenant": "42", "Authorization": "Bearer s3cret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err = b.svix.Endpoint.GetHeaders(b.ctx, "hdr", ep.Id)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(h.Headers, map[string]string{"X-Tenant": "42"}) || !slices.Equal(h.Sensitive, []string{"Authorization"}) {
		t.Fatalf("headers %+v", h)
	}
	err = b.svix.Endpoint.PatchHeaders(b.ctx, "hdr", ep.Id, &svix.EndpointHeadersPatchIn{Headers: map[string]string{"x-tenant": "43", "X-Region": "eu"}})
	if err != nil {
		t.Fatal(err)
	}
	h, _ = b.svix.Endpoint.GetHeaders(b.ctx, "hdr", ep.Id)
	if !maps.Equal(h.Headers, map[string]string{"x-tenant": "43", "X-Region": "eu"}) {
		t.Fatalf("patched headers %+v", h)
	}
	// null removes a header (raw HTTP: the SDK cannot send null).
	resp := b.do(t, "PATCH", "/api/v1/app/hdr/endpoint/"+ep.Id+"/headers", `{"headers":{"X-REGION":null,"authorization":null}}`)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("patch with null: %d", resp.StatusCode)
	}
	h, _ = b.svix.Endpoint.GetHeaders(b.ctx, "hdr", ep.Id)
	if !maps.Equal(h.Headers, map[string]string{"x-tenant": "43"}) || len(h.Sensitive) != 0 {
		t.Fatalf("after null %+v", h)
	}
	// The headers go out with every delivery.
	if _, err := b.client.SendToEndpoint(b.ctx, "hdr", ep.Id, &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	reqs, err := b.recv.Wait(b.ctx, "/hdr", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := reqs[0].Header.Get("X-Tenant"); got != "43" {
		t.Fatalf("X-Tenant %q", got)
	}
}

// An app-portal token reaches its own application's endpoints only.
func TestEndpointAppPortalToken(t *testing.T) {
	t.Parallel()
	tokens := map[string]string{}
	b := setup(t, staticAuth{apps: tokens})
	own := epTestApp(t, b, "own")
	epTestApp(t, b, "other")
	tokens["portal_token"] = own.ID
	auth := []string{"Authorization", "Bearer portal_token"}
	epReadJSON(t, b.do(t, "POST", "/api/v1/app/own/endpoint", `{"url":"https://example.com/a","uid":"mine"}`, auth...), http.StatusCreated)
	epReadJSON(t, b.do(t, "GET", "/api/v1/app/own/endpoint/mine", "", auth...), http.StatusOK)
	epReadJSON(t, b.do(t, "POST", "/api/v1/app/other/endpoint", `{"url":"https://example.com/a"}`, auth...), http.StatusForbidden)
	epReadJSON(t, b.do(t, "GET", "/api/v1/app/other/endpoint", "", auth...), http.StatusForbidden)
	epReadJSON(t, b.do(t, "GET", "/api/v1/app/own/endpoint", "", "Authorization", "Bearer wrong"), http.StatusUnauthorized)
}
