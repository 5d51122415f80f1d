package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/metrics"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

// The API's requests are labelled by the route pattern that matched, never by the path and its
// ids; a path no route matches is "unmatched".
func TestInstrumentLabelsByRoutePattern(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	const token = "hookd_sk_metrics_test_admin_token_0123456789"
	auth, _, err := server.NewTokenAuth(ctx, store, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(client, &server.Config{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(store, nil)
	srv := httptest.NewServer(m.Instrument(api))
	t.Cleanup(srv.Close)
	app, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme_secret_uid"})
	if err != nil {
		t.Fatal(err)
	}

	get := func(path string, want int) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("GET %s: status %d, want %d", path, res.StatusCode, want)
		}
	}
	get("/api/v1/app/"+app.ID, http.StatusOK)
	get("/api/v1/app/acme_secret_uid/", http.StatusOK) // by uid, with the trailing slash Svix ignores
	get("/api/v1/app/"+app.ID+"/endpoint", http.StatusOK)
	get("/api/v1/app/app_missing_one/endpoint", http.StatusNotFound)
	get("/api/v1/no/such/route/ep_42", http.StatusNotFound)

	out := scrape(t, m)
	has(t, out,
		"# TYPE hookd_http_requests_total counter",
		`hookd_http_requests_total{code="200",method="GET",route="GET /api/v1/app/{app_id}"} 2`,
		`hookd_http_requests_total{code="200",method="GET",route="GET /api/v1/app/{app_id}/endpoint"} 1`,
		`hookd_http_requests_total{code="404",method="GET",route="GET /api/v1/app/{app_id}/endpoint"} 1`,
		`hookd_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		"# TYPE hookd_http_request_duration_seconds histogram",
		`hookd_http_request_duration_seconds_count{method="GET",route="GET /api/v1/app/{app_id}"} 2`,
		`hookd_http_request_duration_seconds_count{method="GET",route="unmatched"} 1`,
	)
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "hookd_http_") {
			continue
		}
		for _, id := range []string{app.ID, "acme_secret_uid", "app_missing_one", "ep_42", "/no/such"} {
			if strings.Contains(l, id) {
				t.Errorf("the path's %q is in a label: %s", id, l)
			}
		}
	}
}

// A method a client makes up is labelled "other", so it cannot add series.
func TestInstrumentBoundsTheMethod(t *testing.T) {
	t.Parallel()
	m := metrics.New(nil, nil)
	h := m.Instrument(http.NotFoundHandler())
	for _, method := range []string{"BREW", "PROPFIND", http.MethodDelete} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/x", nil))
	}
	out := scrape(t, m)
	has(t, out,
		`hookd_http_requests_total{code="404",method="other",route="unmatched"} 2`,
		`hookd_http_requests_total{code="404",method="DELETE",route="unmatched"} 1`,
	)
	if strings.Contains(out, "BREW") {
		t.Errorf("an invented method is a label:\n%s", out)
	}
}
