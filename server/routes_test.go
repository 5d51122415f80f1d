package server

import (
	"net/http"
	"testing"
)

// TestRouteKinds sends every route of the table without a token: an authed route answers 401
// before its handler runs, a public one answers from its handler. Only the health checks are
// public.
func TestRouteKinds(t *testing.T) {
	t.Parallel()
	f := newAccessFixture(t)
	wantPublic := map[string]bool{"GET /api/v1/health": true, "GET /api/v1/health/ping": true}
	rows := f.api.routeTable()
	if len(rows) != len(f.api.patterns) {
		t.Fatalf("%d rows in the table, %d routes registered", len(rows), len(f.api.patterns))
	}
	for _, rt := range rows {
		if got := rt.kind == public; got != wantPublic[rt.pattern] {
			t.Errorf("route %q: public %v, want %v", rt.pattern, got, wantPublic[rt.pattern])
		}
		method, path := fill(rt.pattern, f.ids)
		resp := f.b.do(t, method, path, "{}", "Authorization", "")
		resp.Body.Close()
		if unauthorized := resp.StatusCode == http.StatusUnauthorized; unauthorized != (rt.kind == authed) {
			t.Errorf("%s %s without a token: %d; want 401 exactly when the route is authed", method, path, resp.StatusCode)
		}
	}
}
