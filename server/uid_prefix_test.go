package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/hookd/hookd"
)

// TestUIDPrefixes: a uid may not start with the id prefix of its own entity (app_ for an
// application, ep_ for an endpoint), as in Svix, and may start with any other entity's prefix. A
// refused uid is a 422 naming the field, and nothing is stored.
func TestUIDPrefixes(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Base","uid":"base"}`), http.StatusCreated)
	const prefixMsg = "Uids are not allowed to have the same prefix as the ID. Prefix with _?"
	refused := []struct{ method, path, body, field string }{
		{"POST", "/api/v1/app", `{"name":"x","uid":"app_x"}`, "uid"},
		{"PUT", "/api/v1/app/newapp", `{"name":"x","uid":"app_x"}`, "uid"},
		{"PATCH", "/api/v1/app/base", `{"uid":"app_x"}`, "uid"},
		{"POST", "/api/v1/app/base/endpoint", `{"url":"https://x.example","uid":"ep_x"}`, "uid"},
		{"PUT", "/api/v1/app/base/endpoint/newep", `{"url":"https://x.example","uid":"ep_x"}`, "uid"},
		{"POST", "/api/v1/app/newapp/msg", `{"eventType":"a","payload":{},"application":{"name":"N","uid":"app_x"}}`, "application.uid"},
	}
	for _, c := range refused {
		out := appReadJSON(t, b.do(t, c.method, c.path, c.body), http.StatusUnprocessableEntity)
		d := out["detail"].([]any)[0].(map[string]any)
		if loc := d["loc"].([]any); len(loc) != 2 || loc[0] != "body" || loc[1] != c.field || d["msg"] != prefixMsg {
			t.Fatalf("%s %s %s: detail %v", c.method, c.path, c.body, d)
		}
	}
	apps, err := b.client.ListApplications(b.ctx, hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(apps.Data) != 1 || apps.Data[0].UID != "base" {
		t.Fatalf("applications after refused uids: %+v", apps.Data)
	}
	if eps, err := b.client.ListEndpoints(b.ctx, "base", hookd.ListOptions{}); err != nil || len(eps.Data) != 0 {
		t.Fatalf("endpoints after refused uids: %+v, %v", eps, err)
	}

	// Another entity's prefix is an ordinary uid.
	for _, uid := range []string{"ep_app", "msg_app", "_app_x"} {
		out := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"x","uid":"`+uid+`"}`), http.StatusCreated)
		if out["uid"] != uid {
			t.Fatalf("app uid %q: %v", uid, out)
		}
	}
	for _, uid := range []string{"app_ep", "msg_ep", "_ep_x"} {
		out := appReadJSON(t, b.do(t, "POST", "/api/v1/app/base/endpoint", `{"url":"https://x.example","uid":"`+uid+`"}`), http.StatusCreated)
		if out["uid"] != uid {
			t.Fatalf("endpoint uid %q: %v", uid, out)
		}
	}
	appReadJSON(t, b.do(t, "PATCH", "/api/v1/app/base", `{"uid":"ep_base"}`), http.StatusOK)
	if a, err := b.client.GetApplication(b.ctx, "ep_base"); err != nil || a.Name != "Base" {
		t.Fatalf("app renamed to uid ep_base: %+v, %v", a, err)
	}
	appReadJSON(t, b.do(t, "POST", "/api/v1/app/msg_new/msg", `{"eventType":"a","payload":{},"application":{"name":"N","uid":"msg_new"}}`), http.StatusAccepted)
	apps, err = b.client.ListApplications(b.ctx, hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var uids []string
	for _, a := range apps.Data {
		uids = append(uids, a.UID)
	}
	slices.Sort(uids)
	if want := []string{"_app_x", "ep_app", "ep_base", "msg_app", "msg_new"}; !slices.Equal(uids, want) {
		t.Fatalf("application uids %v, want %v", uids, want)
	}
}
