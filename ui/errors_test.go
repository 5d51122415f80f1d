package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// The message page offers no resend to a disabled endpoint, and a resend asked anyway is the
// user's to fix: 409 saying so, not "Something went wrong".
func TestResendToDisabledEndpoint(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.client.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.client.SetEndpointDisabled(ctx, "acme", ep.ID, true, "paused for the test"); err != nil {
		t.Fatal(err)
	}
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/msg/" + msg.Message.ID
	if code, _, body := get(t, c, page); code != http.StatusOK || strings.Contains(body, `class="resend"`) || !strings.Contains(body, "endpoint disabled") {
		t.Errorf("message page: %d; want no Resend button for the disabled endpoint, and why\n%s", code, body)
	}
	// A form sent anyway (a page loaded before the endpoint was disabled) is told why.
	action := page + "/resend/" + ep.ID
	if code, _, body := post(t, c, action, s.srv.URL, nil); code != http.StatusConflict || !strings.Contains(body, "disabled") {
		t.Errorf("resend to a disabled endpoint: %d, want 409 saying it is disabled\n%s", code, body)
	}
}

// downStore is a store whose application reads fail as a database that cannot be reached does,
// once down is set.
type downStore struct {
	hookd.Store
	down *atomic.Bool
}

func (s downStore) GetApplication(ctx context.Context, idOrUID string) (*hookd.Application, error) {
	if s.down.Load() {
		return nil, fmt.Errorf("get application: %w: connection refused", hookd.ErrUnavailable)
	}
	return s.Store.GetApplication(ctx, idOrUID)
}

func (s downStore) ListApplications(ctx context.Context, opts hookd.ListOptions) (*hookd.Page[hookd.Application], error) {
	if s.down.Load() {
		return nil, fmt.Errorf("list applications: %w: connection refused", hookd.ErrUnavailable)
	}
	return s.Store.ListApplications(ctx, opts)
}

// While the database cannot be reached, the pages answer 503 with Retry-After and say to try
// again, on the dashboard and the portal alike (they once answered 500, "Something went wrong").
func TestPagesWhileDatabaseUnavailable(t *testing.T) {
	var down atomic.Bool
	s := newSiteOver(t, false, func(st hookd.Store) hookd.Store { return downStore{st, &down} })
	appToken, err := s.auth.IssueAppToken(context.Background(), s.acme.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dash, portal := browser(t), browser(t)
	if code, _, _ := post(t, dash, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	if code, _, _ := get(t, portal, s.srv.URL+"/portal?token="+appToken); code != http.StatusSeeOther {
		t.Fatalf("portal sign-in: %d", code)
	}
	down.Store(true)
	for _, tc := range []struct {
		c    *http.Client
		page string
	}{
		{dash, "/ui/"},
		{dash, "/ui/app/" + s.acme.ID},
		{portal, "/portal/app/" + s.acme.ID},
	} {
		resp, err := tc.c.Get(s.srv.URL + tc.page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "Try again") {
			t.Errorf("%s while the database is down: %d, Retry-After %q; want 503 with Retry-After, saying to try again\n%s",
				tc.page, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	down.Store(false)
	if code, _, body := get(t, dash, s.srv.URL+"/ui/"); code != http.StatusOK || !strings.Contains(body, "Acme") {
		t.Errorf("/ui/ once the database is back: %d", code)
	}
}

// An endpoint past the application's bound is the user's to fix: 422 saying so, not "Something
// went wrong", and nothing is created.
func TestAddEndpointPastTheBound(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	for range hookd.DefaultMaxEndpointsPerApp {
		if _, err := s.client.CreateEndpoint(ctx, "acme", &hookd.EndpointIn{URL: "https://example.com/hook"}); err != nil {
			t.Fatal(err)
		}
	}
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	code, _, body := post(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/endpoints", s.srv.URL, url.Values{"url": {"https://example.com/one-more"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "the most it may have") {
		t.Errorf("an endpoint past the bound: %d, want 422 saying why\n%s", code, body)
	}
	page, err := s.client.ListEndpoints(ctx, "acme", hookd.ListOptions{Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != hookd.DefaultMaxEndpointsPerApp {
		t.Errorf("%d endpoints, want %d", len(page.Data), hookd.DefaultMaxEndpointsPerApp)
	}
}
