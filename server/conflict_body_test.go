package server

import (
	"io"
	"net/http"
	"testing"
)

// TestConflictBodies pins Svix's answer to a uid taken: 409 with {"code":"conflict"} and a detail,
// whatever the store's error says (an application's uid, an endpoint's uid on create and update).
func TestConflictBodies(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Acme","uid":"acme"}`), http.StatusCreated)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app/acme/endpoint", `{"url":"https://a.example","uid":"e1"}`), http.StatusCreated)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app/acme/endpoint", `{"url":"https://b.example","uid":"e2"}`), http.StatusCreated)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/api/v1/app", `{"name":"Again","uid":"acme"}`,
			`{"code":"conflict","detail":"An application with that uid already exists."}`},
		{"POST", "/api/v1/app/acme/endpoint", `{"url":"https://c.example","uid":"e1"}`,
			`{"code":"conflict","detail":"An entity with this uid already exists."}`},
		{"PUT", "/api/v1/app/acme/endpoint/e2", `{"url":"https://b.example","uid":"e1"}`,
			`{"code":"conflict","detail":"An entity with this uid already exists."}`},
	} {
		resp := b.do(t, tc.method, tc.path, tc.body)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusConflict || string(body) != tc.want+"\n" {
			t.Errorf("%s %s: %d %s, want 409 %s", tc.method, tc.path, resp.StatusCode, body, tc.want)
		}
	}
}
