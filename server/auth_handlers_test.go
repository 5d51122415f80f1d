package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	svix "github.com/svix/svix-webhooks/go"
)

// authSetup is setup with a TokenAuth over the bundle's store, whose admin token is testToken.
func authSetup(t *testing.T) *bundle {
	t.Helper()
	b := setup(t, nil)
	ta, generated, err := NewTokenAuth(b.ctx, b.store, testToken, nil)
	if err != nil || generated != "" {
		t.Fatalf("NewTokenAuth: %q, %v", generated, err)
	}
	api, err := New(b.client, &Config{Auth: ta, Logger: b.log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	nb := *b
	nb.srv = srv
	nb.svix = authSDK(srv, testToken)
	return &nb
}

// authSDK is the Go SDK pointed at srv with token.
func authSDK(srv *httptest.Server, token string) *svix.Svix {
	u, _ := url.Parse(srv.URL)
	return svix.New(token, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
}

func TestAuthAppPortalAccessAndLogout(t *testing.T) {
	t.Parallel()
	b := authSetup(t)
	ctx := b.ctx
	own, err := b.svix.Application.Create(ctx, &svix.ApplicationIn{Name: "Own", Uid: svix.String("own")})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.svix.Application.Create(ctx, &svix.ApplicationIn{Name: "Other", Uid: svix.String("other")})
	if err != nil {
		t.Fatal(err)
	}

	access, err := b.svix.Authentication.AppPortalAccess(ctx, "own", &svix.AppPortalAccessIn{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(access.Token, "hookd_app_") {
		t.Fatalf("token %q", access.Token)
	}
	u, err := url.Parse(access.Url)
	if err != nil || u.Host != strings.TrimPrefix(b.srv.URL, "http://") || u.Path != "/portal" || u.Query().Get("token") != access.Token {
		t.Fatalf("url %q", access.Url)
	}

	portal := authSDK(b.srv, access.Token)
	if got, err := portal.Application.Get(ctx, own.Id); err != nil || got.Id != own.Id {
		t.Fatalf("portal get own: %+v, %v", got, err)
	}
	if _, err := portal.Application.Get(ctx, "other"); appSvixStatus(err) != http.StatusForbidden {
		t.Fatalf("portal get other: %v, want 403", err)
	}
	if _, err := portal.Application.Get(ctx, other.Id); appSvixStatus(err) != http.StatusForbidden {
		t.Fatalf("portal get other by id: %v, want 403", err)
	}
	if _, err := portal.Application.List(ctx, nil); appSvixStatus(err) != http.StatusForbidden {
		t.Fatalf("portal list: %v, want 403", err)
	}
	if _, err := portal.Authentication.AppPortalAccess(ctx, "own", &svix.AppPortalAccessIn{}); appSvixStatus(err) != http.StatusForbidden {
		t.Fatalf("portal mints a token: %v, want 403", err)
	}

	if err := portal.Authentication.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := portal.Application.Get(ctx, own.Id); appSvixStatus(err) != http.StatusUnauthorized {
		t.Fatalf("after logout: %v, want 401", err)
	}
	if err := portal.Authentication.Logout(ctx); appSvixStatus(err) != http.StatusUnauthorized {
		t.Fatalf("second logout: %v, want 401", err)
	}
	// The admin token cannot log out, and still works.
	if err := b.svix.Authentication.Logout(ctx); appSvixStatus(err) != http.StatusForbidden {
		t.Fatalf("admin logout: %v, want 403", err)
	}
	if _, err := b.svix.Application.Get(ctx, "own"); err != nil {
		t.Fatal(err)
	}
}

func TestAuthDashboardAccess(t *testing.T) {
	t.Parallel()
	b := authSetup(t)
	app, err := b.svix.Application.Create(b.ctx, &svix.ApplicationIn{Name: "Dash", Uid: svix.String("dash")})
	if err != nil {
		t.Fatal(err)
	}
	access, err := b.svix.Authentication.DashboardAccess(b.ctx, "dash")
	if err != nil || !strings.Contains(access.Url, "/portal?token=") {
		t.Fatalf("dashboard access %+v, %v", access, err)
	}
	if got, err := authSDK(b.srv, access.Token).Application.Get(b.ctx, "dash"); err != nil || got.Id != app.Id {
		t.Fatalf("dashboard token: %+v, %v", got, err)
	}
	if _, err := b.svix.Authentication.DashboardAccess(b.ctx, "nobody"); appSvixStatus(err) != http.StatusNotFound {
		t.Fatalf("unknown app: %v, want 404", err)
	}
	// An application's tokens go with it.
	if err := b.svix.Application.Delete(b.ctx, "dash"); err != nil {
		t.Fatal(err)
	}
	if _, err := authSDK(b.srv, access.Token).Application.Get(b.ctx, app.Id); appSvixStatus(err) != http.StatusUnauthorized {
		t.Fatalf("token of a deleted app: %v, want 401", err)
	}
}

// TestAuthPortalAccessCreatesApp: AppPortalAccessIn.application creates the application when the
// path names none, if its uid is given and is the path's (as in Svix); otherwise it is a 422 on
// application.uid and nothing is created. It is ignored when the application exists.
func TestAuthPortalAccessCreatesApp(t *testing.T) {
	t.Parallel()
	b := authSetup(t)
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/newco", `{}`), http.StatusNotFound)
	for _, c := range []struct{ path, body, field, msg string }{
		{"newco", `{"application":{"name":"New Co"}}`, "application.uid", "Application UID not set in body"},
		{"newco", `{"application":{"name":"New Co","uid":null}}`, "application.uid", "Application UID not set in body"},
		{"newco", `{"application":{"name":"New Co","uid":"other"}}`, "application.uid", "Application UID in the path and body must match"},
		{"newco", `{"application":{"name":"New Co","uid":"NEWCO"}}`, "application.uid", "Application UID in the path and body must match"},
		{"newco", `{"application":{"uid":"newco"}}`, "application.name", "field required"},
		{"newco", `{"application":{"name":"","uid":"newco"}}`, "application.name", ""},
		{"newco", `{"application":{"name":"New Co","uid":"newco","throttleRate":0}}`, "application.throttleRate", ""},
		{"app_x", `{"application":{"name":"New Co","uid":"app_x"}}`, "application.uid", "Uids are not allowed to have the same prefix as the ID. Prefix with _?"},
	} {
		out := appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/"+c.path, c.body), http.StatusUnprocessableEntity)
		d := out["detail"].([]any)[0].(map[string]any)
		if loc := d["loc"].([]any); len(loc) != 2 || loc[0] != "body" || loc[1] != c.field || (c.msg != "" && d["msg"] != c.msg) {
			t.Fatalf("%s %s: detail %v, want %s %q", c.path, c.body, d, c.field, c.msg)
		}
	}
	if apps, err := b.client.ListApplications(b.ctx, hookd.ListOptions{}); err != nil || len(apps.Data) != 0 {
		t.Fatalf("applications after refused requests: %+v, %v", apps, err)
	}

	out := appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/newco", `{"application":{"name":"New Co","uid":"newco"},"expiry":3600}`), http.StatusOK)
	app, err := b.client.GetApplication(b.ctx, "newco")
	if err != nil || app.Name != "New Co" {
		t.Fatalf("created app %+v, %v", app, err)
	}
	got := appReadJSON(t, b.do(t, "GET", "/api/v1/app/newco", "", "Authorization", "Bearer "+out["token"].(string)), http.StatusOK)
	if got["id"] != app.ID {
		t.Fatalf("portal token reads %v", got)
	}
	// It is ignored when the application exists, by uid or id, whatever its uid; but it is
	// still checked.
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/newco", `{"application":{"name":"Other Name"}}`), http.StatusOK)
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/newco", `{"application":{"name":"Other Name","uid":"elsewhere"}}`), http.StatusOK)
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/"+app.ID, `{"application":{"name":"Other Name","uid":"newco"}}`), http.StatusOK)
	appReadJSON(t, b.do(t, "POST", "/api/v1/auth/app-portal-access/newco", `{"application":{"uid":"newco"}}`), http.StatusUnprocessableEntity)
	if app, _ := b.client.GetApplication(b.ctx, "newco"); app.Name != "New Co" {
		t.Fatalf("existing app changed: %+v", app)
	}
	if apps, err := b.client.ListApplications(b.ctx, hookd.ListOptions{}); err != nil || len(apps.Data) != 1 {
		t.Fatalf("applications: %+v, %v", apps, err)
	}

	// The Go SDK v1.44.0 sends the inline application.
	access, err := b.svix.Authentication.AppPortalAccess(b.ctx, "sdkco", &svix.AppPortalAccessIn{
		Application: &svix.ApplicationIn{Name: "SDK Co", Uid: svix.String("sdkco")}})
	if err != nil || access.Token == "" {
		t.Fatalf("SDK portal access creating its app: %+v, %v", access, err)
	}
	if a, err := b.client.GetApplication(b.ctx, "sdkco"); err != nil || a.Name != "SDK Co" {
		t.Fatalf("SDK-created app %+v, %v", a, err)
	}
}

func TestAuthMissingOrWrongToken(t *testing.T) {
	t.Parallel()
	b := authSetup(t)
	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer wrong", "Basic " + testToken, testToken, "Bearer " + testToken + "x"} {
		req, err := http.NewRequestWithContext(b.ctx, "GET", b.srv.URL+"/api/v1/app", nil)
		if err != nil {
			t.Fatal(err)
		}
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out := appReadJSON(t, resp, http.StatusUnauthorized)
		resp.Body.Close()
		if out["code"] != "authentication_failed" {
			t.Fatalf("%q: %v", h, out)
		}
	}
	if _, err := authSDK(b.srv, "wrong").Application.List(b.ctx, nil); appSvixStatus(err) != http.StatusUnauthorized {
		t.Fatalf("SDK with a wrong token: %v, want 401", err)
	}
	// The bearer scheme is case-insensitive.
	appReadJSON(t, b.do(t, "GET", "/api/v1/app", "", "Authorization", "bearer "+testToken), http.StatusOK)
	// Health needs no token.
	resp := b.do(t, "GET", "/api/v1/health", "", "Authorization", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
}

func TestAuthBadInput(t *testing.T) {
	t.Parallel()
	b := authSetup(t)
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"A","uid":"a"}`), http.StatusCreated)
	runBadCases(t, b, []badCase{
		{"POST", "/api/v1/auth/app-portal-access/a", `{"expiry":10}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/a", `{"expiry":604801}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/a", `{"expiry":"1h"}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/a", `{"featureFlags":["bad flag"]}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/a", `{"featureFlags":"x"}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/zzz", `{"application":{"uid":"x"}}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/zzz", `{"application":{"name":""}}`, 422},
		{"POST", "/api/v1/auth/app-portal-access/a", `{"application":`, 400},
		{"POST", "/api/v1/auth/app-portal-access/nobody", `{}`, 404},
		{"POST", "/api/v1/auth/app-portal-access/bad%20id", `{}`, 422},
		{"POST", "/api/v1/auth/dashboard-access/nobody", ``, 404},
		{"POST", "/api/v1/auth/dashboard-access/bad%20id", ``, 422},
		{"POST", "/api/v1/auth/logout", ``, 403},
	})
	// Without a TokenIssuer the token routes say so.
	plain := setup(t, nil)
	appReadJSON(t, plain.do(t, "POST", "/api/v1/app", `{"name":"A","uid":"a"}`), http.StatusCreated)
	appReadJSON(t, plain.do(t, "POST", "/api/v1/auth/app-portal-access/a", `{}`), http.StatusNotImplemented)
}
