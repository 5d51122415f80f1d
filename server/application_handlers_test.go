package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

// appReadJSON checks the status and Content-Type of resp and decodes its JSON object.
func appReadJSON(t *testing.T, resp *http.Response, status int) map[string]any {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q, want application/json", resp.Request.Method, resp.Request.URL.Path, ct)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return out
}

// appSvixStatus returns the HTTP status of an error of the Svix SDK (0 if it is none).
func appSvixStatus(err error) int {
	var se *svix.Error
	if errors.As(err, &se) {
		return se.Status()
	}
	return 0
}

func TestApplicationCRUDWithSDK(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := b.ctx

	created, err := b.svix.Application.Create(ctx, &svix.ApplicationIn{
		Name: "Acme", Uid: svix.String("acme"), RateLimit: svix.Int32(5), Metadata: &map[string]string{"tier": "gold"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Id, "app_") || created.Name != "Acme" || *created.Uid != "acme" ||
		*created.RateLimit != 5 || created.Metadata["tier"] != "gold" || created.CreatedAt.IsZero() {
		t.Fatalf("created %+v", created)
	}

	for _, ref := range []string{"acme", created.Id} {
		got, err := b.svix.Application.Get(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if got.Id != created.Id || got.Name != "Acme" {
			t.Fatalf("get %s: %+v", ref, got)
		}
	}

	// A second create with the uid is 409; with get_if_exists it is the same application.
	if _, err := b.svix.Application.Create(ctx, &svix.ApplicationIn{Name: "Again", Uid: svix.String("acme")}); appSvixStatus(err) != http.StatusConflict {
		t.Fatalf("duplicate uid: %v, want 409", err)
	}
	same, err := b.svix.Application.GetOrCreate(ctx, &svix.ApplicationIn{Name: "Again", Uid: svix.String("acme")})
	if err != nil || same.Id != created.Id || same.Name != "Acme" {
		t.Fatalf("get or create existing: %+v, %v", same, err)
	}
	fresh, err := b.svix.Application.GetOrCreate(ctx, &svix.ApplicationIn{Name: "Fresh", Uid: svix.String("fresh")})
	if err != nil || fresh.Id == created.Id || fresh.Name != "Fresh" {
		t.Fatalf("get or create new: %+v, %v", fresh, err)
	}

	// PUT replaces every field: no rateLimit, no metadata now.
	updated, err := b.svix.Application.Update(ctx, "acme", &svix.ApplicationIn{Name: "Acme Inc", Uid: svix.String("acme")})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Id != created.Id || updated.Name != "Acme Inc" || updated.RateLimit != nil || len(updated.Metadata) != 0 {
		t.Fatalf("updated %+v", updated)
	}
	if !updated.UpdatedAt.After(created.UpdatedAt) && !updated.UpdatedAt.Equal(created.UpdatedAt) {
		t.Fatalf("updatedAt went back: %v, %v", created.UpdatedAt, updated.UpdatedAt)
	}

	// PATCH changes only what it names.
	patched, err := b.svix.Application.Patch(ctx, created.Id, &svix.ApplicationPatch{Metadata: &map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Name != "Acme Inc" || *patched.Uid != "acme" || patched.Metadata["k"] != "v" {
		t.Fatalf("patched %+v", patched)
	}
	p := &svix.ApplicationPatch{Name: svix.String("Acme 2")}
	p.SetRateLimit(7)
	patched, err = b.svix.Application.Patch(ctx, "acme", p)
	if err != nil {
		t.Fatal(err)
	}
	if patched.Name != "Acme 2" || *patched.RateLimit != 7 || patched.Metadata["k"] != "v" {
		t.Fatalf("patched %+v", patched)
	}
	// 0 removes the cap: the Go SDK cannot send null.
	p = &svix.ApplicationPatch{}
	p.SetRateLimit(0)
	patched, err = b.svix.Application.Patch(ctx, "acme", p)
	if err != nil || patched.RateLimit != nil {
		t.Fatalf("patch rate 0: %+v, %v", patched, err)
	}

	if err := b.svix.Application.Delete(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svix.Application.Get(ctx, created.Id); appSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("get deleted: %v, want 404", err)
	}
	if err := b.svix.Application.Delete(ctx, "acme"); appSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("delete deleted: %v, want 404", err)
	}
}

func TestApplicationListPaging(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var ids []string
	for i := range 5 {
		a, err := b.svix.Application.Create(b.ctx, &svix.ApplicationIn{Name: fmt.Sprintf("App %d", i), Uid: svix.String(fmt.Sprintf("app-%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.Id)
	}

	walk := func(order *svix.Ordering) []string {
		var got []string
		var it *string
		for range 10 {
			page, err := b.svix.Application.List(b.ctx, &svix.ApplicationListOptions{Limit: svix.Int32(2), Iterator: it, Order: order})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range page.Data {
				got = append(got, a.Id)
			}
			if page.Done {
				return got
			}
			it = page.Iterator.Get()
		}
		t.Fatal("list never done")
		return nil
	}
	if got := walk(nil); !slices.Equal(got, ids) {
		t.Fatalf("ascending %v, want %v", got, ids)
	}
	desc := svix.Ordering("descending")
	want := slices.Clone(ids)
	slices.Reverse(want)
	if got := walk(&desc); !slices.Equal(got, want) {
		t.Fatalf("descending %v, want %v", got, want)
	}

	// prevIterator leads back to the page before.
	first := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2", ""), http.StatusOK)
	second := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2&iterator="+first["iterator"].(string), ""), http.StatusOK)
	if first["prevIterator"] != nil || second["prevIterator"] == nil {
		t.Fatalf("prevIterator: first %v, second %v", first["prevIterator"], second["prevIterator"])
	}
	back := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2&iterator="+second["prevIterator"].(string), ""), http.StatusOK)
	if fmt.Sprint(back["data"]) != fmt.Sprint(first["data"]) {
		t.Fatalf("back %v, want %v", back["data"], first["data"])
	}
	// Descending, prevIterator too.
	d1 := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2&order=descending", ""), http.StatusOK)
	d2 := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2&order=descending&iterator="+d1["iterator"].(string), ""), http.StatusOK)
	dBack := appReadJSON(t, b.do(t, "GET", "/api/v1/app?limit=2&order=descending&iterator="+d2["prevIterator"].(string), ""), http.StatusOK)
	if d1["prevIterator"] != nil || fmt.Sprint(dBack["data"]) != fmt.Sprint(d1["data"]) {
		t.Fatalf("descending back: %v, want %v (first prevIterator %v)", dBack["data"], d1["data"], d1["prevIterator"])
	}
}

// TestApplicationGenerations checks that each generation gets exactly its own field name.
func TestApplicationGenerations(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	// Today's generation: raw HTTP without a Svix User-Agent, input in today's name.
	out := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Gen","uid":"gen","throttleRate":9}`), http.StatusCreated)
	if out["throttleRate"] != 9.0 || out["rateLimit"] != 9.0 {
		t.Fatalf("today: throttleRate %v, rateLimit %v in %v", out["throttleRate"], out["rateLimit"], out)
	}
	for _, ua := range []string{"svix-libs/1.44.0/go", "svix-libs/1.56.0/go"} {
		out = appReadJSON(t, b.do(t, "GET", "/api/v1/app/gen", "", "User-Agent", ua), http.StatusOK)
		if out["rateLimit"] != 9.0 {
			t.Fatalf("%s: rateLimit %v in %v", ua, out["rateLimit"], out)
		}
		if _, ok := out["throttleRate"]; ok {
			t.Fatalf("%s: throttleRate present in %v", ua, out)
		}
	}
	for _, ua := range []string{"svix-libs/1.57.0/go", "svix-libs/1.99.1/go go/go1.26.0", "svix-libs/1.30.2/python"} {
		out = appReadJSON(t, b.do(t, "GET", "/api/v1/app/gen", "", "User-Agent", ua), http.StatusOK)
		if out["rateLimit"] != 9.0 || out["throttleRate"] != 9.0 {
			t.Fatalf("%s: %v", ua, out)
		}
	}
	// The 1.44 name in, today's generation out: ApplicationOut's keys and hookd's own.
	out = appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/gen", `{"rateLimit":3}`), http.StatusOK)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"createdAt", "id", "metadata", "name", "rateLimit", "retrySchedule", "throttleRate", "timeoutSeconds", "uid", "updatedAt"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	// Without a rate, as Svix writes it: throttleRate null, rateLimit and uid left out.
	plain := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Plain"}`), http.StatusCreated)
	if rate, ok := plain["throttleRate"]; !ok || rate != nil {
		t.Fatalf("throttleRate of an application without a rate: %v", plain)
	}
	for _, k := range []string{"rateLimit", "uid"} {
		if _, ok := plain[k]; ok {
			t.Fatalf("%s present in %v", k, plain)
		}
	}
	// The SDK decodes strictly: every route it reads must pass.
	if _, err := b.svix.Application.Get(b.ctx, "gen"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svix.Application.List(b.ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func TestApplicationPutCreates(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	out := appReadJSON(t, b.do(t, "PUT", "/api/v1/app/new-app", `{"name":"New"}`), http.StatusCreated)
	if out["uid"] != "new-app" || out["name"] != "New" {
		t.Fatalf("put created %v", out)
	}
	again := appReadJSON(t, b.do(t, "PUT", "/api/v1/app/new-app", `{"name":"Newer","uid":"new-app"}`), http.StatusOK)
	if again["id"] != out["id"] || again["name"] != "Newer" {
		t.Fatalf("put updated %v, want id %v", again, out["id"])
	}
	// The body's uid wins over the path's.
	other := appReadJSON(t, b.do(t, "PUT", "/api/v1/app/path-uid", `{"name":"Other","uid":"body-uid"}`), http.StatusCreated)
	if other["uid"] != "body-uid" {
		t.Fatalf("put with body uid %v", other)
	}
	// A PUT that moves a uid onto a taken one is 409.
	appReadJSON(t, b.do(t, "PUT", "/api/v1/app/body-uid", `{"name":"Other","uid":"new-app"}`), http.StatusConflict)
}

func TestApplicationPatchNull(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"N","uid":"nullable","throttleRate":4,"metadata":{"a":"b"}}`), http.StatusCreated)
	out := appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/nullable", `{"uid":null,"throttleRate":null}`), http.StatusOK)
	if _, ok := out["uid"]; ok {
		t.Fatalf("uid still set: %v", out)
	}
	if rate, ok := out["throttleRate"]; !ok || rate != nil {
		t.Fatalf("throttleRate still set: %v", out)
	}
	if _, ok := out["rateLimit"]; ok {
		t.Fatalf("rateLimit still set: %v", out)
	}
	if out["name"] != "N" || out["metadata"].(map[string]any)["a"] != "b" {
		t.Fatalf("untouched fields changed: %v", out)
	}
	id := out["id"].(string)
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/nullable", ""), http.StatusNotFound)
	appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/"+id, `{"name":null}`), http.StatusUnprocessableEntity)
	appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/"+id, `{"metadata":null}`), http.StatusUnprocessableEntity)
	appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/"+id, `{}`), http.StatusOK)
}

// TestApplicationAppToken checks what an app-portal token may do with applications.
func TestApplicationAppToken(t *testing.T) {
	t.Parallel()
	tokens := map[string]string{}
	b := setup(t, staticAuth{apps: tokens})
	own, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Own", UID: "own"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CreateApplication(b.ctx, &hookd.ApplicationIn{Name: "Other", UID: "other"}); err != nil {
		t.Fatal(err)
	}
	tokens["portal"] = own.ID
	auth := []string{"Authorization", "Bearer portal"}
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/own", "", auth...), http.StatusOK)
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/"+own.ID, "", auth...), http.StatusOK)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/app/other", ""},
		{"GET", "/api/v1/app", ""},
		{"POST", "/api/v1/app", `{"name":"x"}`},
		{"PUT", "/api/v1/app/own", `{"name":"x"}`},
		{"PATCH", "/api/v1/app/own", `{"name":"x"}`},
		{"DELETE", "/api/v1/app/own", ""},
		{"DELETE", "/api/v1/app/other", ""},
	} {
		out := appReadJSON(t, b.do(t, c.method, c.path, c.body, auth...), http.StatusForbidden)
		if out["code"] != "insufficient_access" {
			t.Fatalf("%s %s: %v", c.method, c.path, out)
		}
	}
	if got, _ := b.client.GetApplication(b.ctx, "own"); got == nil || got.Name != "Own" {
		t.Fatalf("own application changed: %+v", got)
	}
}

// badCase is one request that must fail with status and a JSON body.
type badCase struct {
	method, path, body string
	status             int
}

// runBadCases sends each case with the admin token and checks a JSON error of the right status:
// {"code","detail"} or, for 422, {"detail": [{"loc","msg","type"}]}.
func runBadCases(t *testing.T, b *bundle, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		out := appReadJSON(t, b.do(t, c.method, c.path, c.body), c.status)
		if c.status == http.StatusUnprocessableEntity {
			d, ok := out["detail"].([]any)
			if !ok || len(d) == 0 {
				t.Fatalf("%s %s %s: 422 body %v", c.method, c.path, c.body, out)
			}
			if loc, _ := d[0].(map[string]any)["loc"].([]any); len(loc) < 2 {
				t.Fatalf("%s %s %s: 422 detail %v", c.method, c.path, c.body, d[0])
			}
			continue
		}
		if _, ok := out["code"].(string); !ok {
			t.Fatalf("%s %s %s: body %v", c.method, c.path, c.body, out)
		}
	}
}

func TestApplicationBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Taken","uid":"taken"}`), http.StatusCreated)
	long := strings.Repeat("a", 257)
	runBadCases(t, b, []badCase{
		{"POST", "/api/v1/app", `{"name":`, 400},
		{"POST", "/api/v1/app", `[]`, 422},
		{"POST", "/api/v1/app", ``, 422},
		{"POST", "/api/v1/app", `{}`, 422},
		{"POST", "/api/v1/app", `{"name":""}`, 422},
		{"POST", "/api/v1/app", `{"name":"a\u0001b"}`, 422},
		{"POST", "/api/v1/app", `{"name":7}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":"has space"}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":"app_123"}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":"` + long + `"}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":""}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":5}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","rateLimit":0}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","throttleRate":65536}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","throttleRate":-1}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","throttleRate":1.5}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","throttleRate":"5"}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","rateLimit":2,"throttleRate":3}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","metadata":{"a":1}}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","metadata":[]}`, 422},
		{"POST", "/api/v1/app", `{"name":"x","uid":"taken"}`, 409},
		{"POST", "/api/v1/app?get_if_exists=maybe", `{"name":"x"}`, 422},
		{"GET", "/api/v1/app?limit=0", ``, 422},
		{"GET", "/api/v1/app?limit=251", ``, 422},
		{"GET", "/api/v1/app?limit=x", ``, 422},
		{"GET", "/api/v1/app?order=sideways", ``, 422},
		{"GET", "/api/v1/app/nope", ``, 404},
		{"GET", "/api/v1/app/app_nope", ``, 404},
		{"GET", "/api/v1/app/" + long, ``, 422},
		{"GET", "/api/v1/app/bad%20id", ``, 422},
		{"PUT", "/api/v1/app/taken", `{"uid":"taken"}`, 422},
		{"PUT", "/api/v1/app/taken", `{"name":`, 400},
		{"PUT", "/api/v1/app/bad%21", `{"name":"x"}`, 422},
		{"PATCH", "/api/v1/app/nope", `{"name":"x"}`, 404},
		{"PATCH", "/api/v1/app/taken", `{"name":""}`, 422},
		{"PATCH", "/api/v1/app/taken", `{"name":5}`, 422},
		{"PATCH", "/api/v1/app/taken", `{"uid":"no way"}`, 422},
		{"PATCH", "/api/v1/app/taken", `{"throttleRate":-3}`, 422},
		{"PATCH", "/api/v1/app/taken", `{"rateLimit":"x"}`, 422},
		{"PATCH", "/api/v1/app/taken", `not json`, 400},
		{"DELETE", "/api/v1/app/nope", ``, 404},
	})
}
