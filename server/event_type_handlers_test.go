package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
)

func TestEventTypeCRUDWithSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := b.ctx
	schemas := map[string]any{"1": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}

	created, err := b.svix.EventType.Create(ctx, &svix.EventTypeIn{Name: "invoice.paid", Description: "An invoice was paid", Schemas: schemas})
	if err != nil {
		t.Fatal(err)
	}
	if created.Name != "invoice.paid" || created.Description != "An invoice was paid" || *created.Archived || created.Deprecated ||
		created.Schemas["1"] == nil || created.FeatureFlag != nil || created.CreatedAt.IsZero() {
		t.Fatalf("created %+v", created)
	}
	got, err := b.svix.EventType.Get(ctx, "invoice.paid")
	if err != nil || got.Description != "An invoice was paid" || got.Schemas["1"] == nil {
		t.Fatalf("get %+v, %v", got, err)
	}
	// A second create of a live event type is 409 event_type_exists.
	_, err = b.svix.EventType.Create(ctx, &svix.EventTypeIn{Name: "invoice.paid", Description: "again"})
	if appSvixStatus(err) != http.StatusConflict || !strings.Contains(string(err.(*svix.Error).Body()), "event_type_exists") {
		t.Fatalf("duplicate create: %v", err)
	}

	updated, err := b.svix.EventType.Update(ctx, "invoice.paid", &svix.EventTypeUpdate{Description: "Paid", FeatureFlag: svix.String("beta")})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Description != "Paid" || updated.Schemas != nil || *updated.FeatureFlag != "beta" || !updated.CreatedAt.Equal(created.CreatedAt) {
		t.Fatalf("updated %+v", updated)
	}
	p := &svix.EventTypePatch{}
	p.SetDescription("Paid in full")
	patched, err := b.svix.EventType.Patch(ctx, "invoice.paid", p)
	if err != nil || patched.Description != "Paid in full" || *patched.FeatureFlag != "beta" {
		t.Fatalf("patched %+v, %v", patched, err)
	}

	// DELETE archives: gone from the default list, still readable, listed with include_archived.
	if err := b.svix.EventType.Delete(ctx, "invoice.paid"); err != nil {
		t.Fatal(err)
	}
	got, err = b.svix.EventType.Get(ctx, "invoice.paid")
	if err != nil || !*got.Archived {
		t.Fatalf("archived get %+v, %v", got, err)
	}
	list, err := b.svix.EventType.List(ctx, nil)
	if err != nil || len(list.Data) != 0 {
		t.Fatalf("list without archived: %+v, %v", list, err)
	}
	list, err = b.svix.EventType.List(ctx, &svix.EventTypeListOptions{IncludeArchived: etBool(true)})
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("list with archived: %+v, %v", list, err)
	}
	// Creating an archived event type again brings it back, with the new fields (201).
	again, err := b.svix.EventType.Create(ctx, &svix.EventTypeIn{Name: "invoice.paid", Description: "Back"})
	if err != nil || *again.Archived || again.Description != "Back" || again.FeatureFlag != nil {
		t.Fatalf("unarchive by create: %+v, %v", again, err)
	}

	if err := b.svix.EventType.DeleteWithOptions(ctx, "invoice.paid", &svix.EventTypeDeleteOptions{Expunge: etBool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svix.EventType.Get(ctx, "invoice.paid"); appSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("get expunged: %v, want 404", err)
	}
}

func TestEventTypePutPatchRaw(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	out := appReadJSON(t, b.do(t, "PUT", "/api/v1/event-type/user.created", `{"description":"New user","schemas":{"1":{"type":"object"}}}`), http.StatusCreated)
	if out["name"] != "user.created" || out["archived"] != false || out["deprecated"] != false {
		t.Fatalf("put created %v", out)
	}
	// EventTypeOut's keys, the same in both generations but for featureFlags, which the SDKs older
	// than 1.70 lack (and the Go SDK up to 1.56 refuses).
	all := []string{"archived", "createdAt", "deprecated", "description", "featureFlag", "featureFlags", "groupName", "name", "schemas", "updatedAt"}
	older := slices.DeleteFunc(slices.Clone(all), func(k string) bool { return k == "featureFlags" })
	for _, c := range []struct {
		ua   string
		want []string
	}{
		{"", all}, {"curl/8.5.0", all}, {"svix-libs/1.70.0/go", all}, {"svix-libs/1.99.1/go", all},
		{"svix-libs/1.44.0/go", older}, {"svix-libs/1.56.0/go", older}, {"svix-libs/1.69.9/python", older},
	} {
		out = appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/user.created", "", "User-Agent", c.ua), http.StatusOK)
		keys := make([]string, 0, len(out))
		for k := range out {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, c.want) {
			t.Fatalf("%q: keys %v, want %v", c.ua, keys, c.want)
		}
	}
	out = appReadJSON(t, b.do(t, "PUT", "/api/v1/event-type/user.created", `{"description":"Changed","archived":true}`), http.StatusOK)
	if out["description"] != "Changed" || out["archived"] != true || out["schemas"] != nil {
		t.Fatalf("put updated %v", out)
	}
	out = appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/user.created", `{"archived":false,"featureFlag":"beta","schemas":{"2":{"type":"string"}}}`), http.StatusOK)
	if out["archived"] != false || out["featureFlag"] != "beta" || out["schemas"].(map[string]any)["2"] == nil || out["description"] != "Changed" {
		t.Fatalf("patch %v", out)
	}
	out = appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/user.created", `{"featureFlag":null,"schemas":null}`), http.StatusOK)
	if out["featureFlag"] != nil || out["schemas"] != nil {
		t.Fatalf("patch null %v", out)
	}
	created, _ := time.Parse(time.RFC3339Nano, out["createdAt"].(string))
	updated, _ := time.Parse(time.RFC3339Nano, out["updatedAt"].(string))
	if created.IsZero() || updated.Before(created) || !strings.HasSuffix(out["updatedAt"].(string), "Z") {
		t.Fatalf("times %v", out)
	}
}

// TestEventTypeDeprecatedGroupAndFlags: deprecated, groupName and featureFlags are kept on create,
// PUT and PATCH and returned by every read; featureFlag is the first of featureFlags.
func TestEventTypeDeprecatedGroupAndFlags(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	check := func(what string, out map[string]any, deprecated bool, group any, flags ...any) {
		t.Helper()
		var first, list any
		if len(flags) > 0 {
			first, list = flags[0], flags
		}
		gotList, _ := out["featureFlags"].([]any)
		if out["deprecated"] != deprecated || out["groupName"] != group || out["featureFlag"] != first ||
			(list == nil) != (out["featureFlags"] == nil) || !slices.Equal(gotList, flags) {
			t.Fatalf("%s: %v; want deprecated %v, groupName %v, featureFlags %v", what, out, deprecated, group, flags)
		}
	}
	out := appReadJSON(t, b.do(t, "POST", "/api/v1/event-type",
		`{"name":"invoice.paid","description":"d","deprecated":true,"groupName":"invoice","featureFlags":["beta","gamma"]}`), http.StatusCreated)
	check("create", out, true, "invoice", "beta", "gamma")
	check("get", appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/invoice.paid", ""), http.StatusOK), true, "invoice", "beta", "gamma")
	list := appReadJSON(t, b.do(t, "GET", "/api/v1/event-type", ""), http.StatusOK)
	check("list", list["data"].([]any)[0].(map[string]any), true, "invoice", "beta", "gamma")

	// PUT replaces every field: absent ones are cleared.
	check("put bare", appReadJSON(t, b.do(t, "PUT", "/api/v1/event-type/invoice.paid", `{"description":"d"}`), http.StatusOK), false, nil)
	out = appReadJSON(t, b.do(t, "PUT", "/api/v1/event-type/invoice.paid", `{"description":"d","deprecated":true,"featureFlag":"solo","groupName":"g"}`), http.StatusOK)
	check("put one flag", out, true, "g", "solo")
	out = appReadJSON(t, b.do(t, "PUT", "/api/v1/event-type/invoice.paid", `{"description":"d","featureFlag":"a","featureFlags":["a","b"]}`), http.StatusOK)
	check("put both", out, false, nil, "a", "b")

	// PATCH changes only what it names.
	check("patch deprecated", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"deprecated":true}`), http.StatusOK), true, nil, "a", "b")
	check("patch group", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"groupName":"billing"}`), http.StatusOK), true, "billing", "a", "b")
	check("patch flags", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"featureFlags":["z","y"]}`), http.StatusOK), true, "billing", "z", "y")
	check("patch flag", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"featureFlag":"only"}`), http.StatusOK), true, "billing", "only")
	check("patch description", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"description":"e"}`), http.StatusOK), true, "billing", "only")
	out = appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"featureFlags":null,"groupName":null,"deprecated":false}`), http.StatusOK)
	check("patch nulls", out, false, nil)
	appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"featureFlag":"x"}`), http.StatusOK)
	check("patch flag null", appReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"featureFlag":null}`), http.StatusOK), false, nil)

	// The Go SDK v1.44.0 sends deprecated and groupName and reads them back.
	created, err := b.svix.EventType.Create(b.ctx, &svix.EventTypeIn{Name: "user.created", Description: "d", Deprecated: etBool(true),
		GroupName: svix.String("user"), FeatureFlag: svix.String("beta")})
	if err != nil || !created.Deprecated || created.GroupName == nil || *created.GroupName != "user" || *created.FeatureFlag != "beta" {
		t.Fatalf("SDK create %+v, %v", created, err)
	}
	p := &svix.EventTypePatch{}
	p.SetDeprecated(false)
	patched, err := b.svix.EventType.Patch(b.ctx, "user.created", p)
	if err != nil || patched.Deprecated || *patched.GroupName != "user" {
		t.Fatalf("SDK patch %+v, %v", patched, err)
	}
	got, err := b.svix.EventType.Get(b.ctx, "user.created")
	if err != nil || got.Deprecated || *got.FeatureFlag != "beta" {
		t.Fatalf("SDK get %+v, %v", got, err)
	}
}

func TestEventTypeListPaging(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("evt.%d", i)
		names = append(names, name)
		schemas := map[string]any{"1": map[string]any{"type": "object"}}
		if _, err := b.svix.EventType.Create(b.ctx, &svix.EventTypeIn{Name: name, Description: "d", Schemas: schemas}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	var it *string
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("list never done")
		}
		l, err := b.svix.EventType.List(b.ctx, &svix.EventTypeListOptions{Limit: svix.Int32(2), Iterator: it})
		if err != nil {
			t.Fatal(err)
		}
		for _, et := range l.Data {
			got = append(got, et.Name)
			if et.Schemas != nil {
				t.Fatalf("schemas without with_content: %+v", et)
			}
		}
		if l.Done {
			break
		}
		it = l.Iterator.Get()
	}
	if !slices.Equal(got, names) {
		t.Fatalf("listed %v, want %v", got, names)
	}
	l, err := b.svix.EventType.List(b.ctx, &svix.EventTypeListOptions{WithContent: etBool(true), Limit: svix.Int32(1)})
	if err != nil || len(l.Data) != 1 || l.Data[0].Schemas["1"] == nil || l.Done {
		t.Fatalf("with content: %+v, %v", l, err)
	}
}

// TestEventTypeAppToken: app-portal tokens read event types (those without a feature flag) and
// write none.
func TestEventTypeAppToken(t *testing.T) {
	t.Parallel()
	tokens := map[string]string{}
	b := setup(t, staticAuth{apps: tokens})
	app := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"A"}`), http.StatusCreated)
	tokens["portal"] = app["id"].(string)
	auth := []string{"Authorization", "Bearer portal"}
	appReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"open","description":"d"}`), http.StatusCreated)
	appReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"flagged","description":"d","featureFlag":"beta"}`), http.StatusCreated)
	appReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"listed.flags","description":"d","featureFlags":["beta"]}`), http.StatusCreated)
	appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/listed.flags", "", auth...), http.StatusNotFound)

	appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/open", "", auth...), http.StatusOK)
	appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/flagged", "", auth...), http.StatusNotFound)
	list := appReadJSON(t, b.do(t, "GET", "/api/v1/event-type", "", auth...), http.StatusOK)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["name"] != "open" {
		t.Fatalf("app token list %v", list)
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d"}`},
		{"PUT", "/api/v1/event-type/open", `{"description":"d"}`},
		{"PATCH", "/api/v1/event-type/open", `{"description":"d"}`},
		{"DELETE", "/api/v1/event-type/open", ``},
	} {
		appReadJSON(t, b.do(t, c.method, c.path, c.body, auth...), http.StatusForbidden)
	}
}

func TestEventTypeGenerateExample(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	schema := `{"schema":{
		"type":"object",
		"properties":{
			"id":{"type":"string","format":"uuid"},
			"at":{"type":"string","format":"date-time"},
			"email":{"type":"string","format":"email"},
			"count":{"type":"integer","minimum":3},
			"ratio":{"type":"number","exclusiveMinimum":0,"maximum":1},
			"paid":{"type":"boolean"},
			"status":{"type":"string","enum":["open","closed"]},
			"note":{"type":["null","string"],"minLength":8},
			"tags":{"type":"array","items":{"type":"string"},"minItems":2},
			"customer":{"$ref":"#/$defs/customer"},
			"either":{"oneOf":[{"type":"integer"},{"type":"string"}]},
			"fixed":{"const":"v1"},
			"given":{"type":"string","examples":["hello"]}
		},
		"$defs":{"customer":{"type":"object","properties":{"name":{"type":"string"},"next":{"$ref":"#/$defs/customer"}}}}
	}}`
	out := appReadJSON(t, b.do(t, "POST", "/api/v1/event-type/schema/generate-example", schema), http.StatusOK)
	ex, ok := out["example"].(map[string]any)
	if !ok {
		t.Fatalf("example %v", out)
	}
	if at, err := time.Parse(time.RFC3339, ex["at"].(string)); err != nil || at.IsZero() {
		t.Fatalf("at %v", ex["at"])
	}
	if len(ex["id"].(string)) != 36 || !strings.Contains(ex["email"].(string), "@") {
		t.Fatalf("formats %v", ex)
	}
	if ex["count"] != 3.0 || ex["paid"] != true || ex["status"] != "open" || ex["fixed"] != "v1" || ex["given"] != "hello" {
		t.Fatalf("scalars %v", ex)
	}
	if r := ex["ratio"].(float64); r <= 0 || r > 1 {
		t.Fatalf("ratio %v", r)
	}
	if n, _ := ex["note"].(string); len(n) < 8 {
		t.Fatalf("note %v", ex["note"])
	}
	if tags := ex["tags"].([]any); len(tags) != 2 || tags[0] != "string" {
		t.Fatalf("tags %v", ex["tags"])
	}
	if c := ex["customer"].(map[string]any); c["name"] != "string" {
		t.Fatalf("customer %v", ex["customer"])
	}
	if ex["either"] != 0.0 {
		t.Fatalf("either %v", ex["either"])
	}
	// The self-reference ends somewhere.
	if b, err := json.Marshal(ex); err != nil || len(b) > 1<<16 {
		t.Fatalf("example of %d bytes: %v", len(b), err)
	}
}

func TestEventTypeBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	appReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"live","description":"d"}`), http.StatusCreated)
	long := strings.Repeat("e", 257)
	runBadCases(t, b, []badCase{
		{"POST", "/api/v1/event-type", `{"name":`, 400},
		{"POST", "/api/v1/event-type", ``, 422},
		{"POST", "/api/v1/event-type", `{"description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"has space","description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"a:b","description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"","description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"` + long + `","description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":5,"description":"d"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"a\u0002b"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"` + strings.Repeat("d", 4097) + `"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","schemas":[1]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","schemas":{"1":"no"}}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlag":"no way"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","archived":"yes"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"live","description":"d"}`, 409},
		{"GET", "/api/v1/event-type?limit=-1", ``, 422},
		{"GET", "/api/v1/event-type?include_archived=perhaps", ``, 422},
		{"GET", "/api/v1/event-type?with_content=2x", ``, 422},
		{"GET", "/api/v1/event-type?order=up", ``, 422},
		{"GET", "/api/v1/event-type/none", ``, 404},
		{"GET", "/api/v1/event-type/bad%20name", ``, 422},
		{"GET", "/api/v1/event-type/" + long, ``, 422},
		{"PUT", "/api/v1/event-type/x", `{}`, 422},
		{"PUT", "/api/v1/event-type/x", `{"description":1}`, 422},
		{"PUT", "/api/v1/event-type/bad%21", `{"description":"d"}`, 422},
		{"PUT", "/api/v1/event-type/x", `nope`, 400},
		{"PATCH", "/api/v1/event-type/none", `{"description":"d"}`, 404},
		{"PATCH", "/api/v1/event-type/live", `{"description":null}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"archived":null}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"schemas":{"1":3}}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"featureFlag":"!"}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"deprecated":"no"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","deprecated":"yes"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlags":[]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlags":"beta"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlags":["a","a"]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlags":["bad flag"]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlags":["` + long + `"]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","featureFlag":"a","featureFlags":["b","a"]}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","groupName":"bad group"}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","groupName":""}`, 422},
		{"POST", "/api/v1/event-type", `{"name":"x","description":"d","groupName":5}`, 422},
		{"PUT", "/api/v1/event-type/x", `{"description":"d","featureFlags":[1]}`, 422},
		{"PUT", "/api/v1/event-type/x", `{"description":"d","groupName":"` + long + `"}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"featureFlags":[]}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"featureFlags":["ok","not ok"]}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"featureFlag":"a","featureFlags":["b"]}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"groupName":"!"}`, 422},
		{"PATCH", "/api/v1/event-type/live", `{"deprecated":null}`, 422},
		{"DELETE", "/api/v1/event-type/none", ``, 404},
		{"DELETE", "/api/v1/event-type/live?expunge=sure", ``, 422},
		{"POST", "/api/v1/event-type/schema/generate-example", `{}`, 422},
		{"POST", "/api/v1/event-type/schema/generate-example", `{"schema":"x"}`, 422},
		{"POST", "/api/v1/event-type/schema/generate-example", `{"schema":`, 400},
	})
	// Nothing refused was stored, nor was the live event type changed.
	appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/x", ""), http.StatusNotFound)
	live := appReadJSON(t, b.do(t, "GET", "/api/v1/event-type/live", ""), http.StatusOK)
	if live["description"] != "d" || live["deprecated"] != false || live["featureFlags"] != nil || live["groupName"] != nil || live["schemas"] != nil {
		t.Fatalf("live after refused changes: %v", live)
	}
}

func etBool(v bool) *bool { return &v }
