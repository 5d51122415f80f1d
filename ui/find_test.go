package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// signIn signs a new browser in to the dashboard.
func (s *site) signIn(t *testing.T) *http.Client {
	t.Helper()
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	return c
}

// TestFind: the search box opens a message by id or event id and an endpoint by id or uid, of
// the page's application only; anything else is a clear 404 or 400, and the portal finds nothing
// of another application's.
func TestFind(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook", UID: "acme-hook"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", EventID: "in_1001", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	gep, err := s.client.CreateEndpoint(ctx, s.globex.ID, &hookd.EndpointIn{URL: "https://globex.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	gm, err := s.client.Send(ctx, s.globex.ID, &hookd.MessageIn{EventType: "invoice.paid", EventID: "gx_1", Payload: map[string]int{"n": 2}})
	if err != nil {
		t.Fatal(err)
	}
	acme := "/app/" + s.acme.ID
	dash := s.signIn(t)
	portal := s.openPortal(t, s.portalToken(t, server.Principal{ReadOnly: true}))
	for _, site := range []struct {
		base string
		c    *http.Client
	}{{"/ui", dash}, {"/portal", portal}} {
		for q, want := range map[string]string{
			m.Message.ID: acme + "/msg/" + m.Message.ID,
			"  in_1001 ": acme + "/msg/" + m.Message.ID,
			ep.ID:        acme + "/endpoint/" + ep.ID,
			"acme-hook":  acme + "/endpoint/" + ep.ID,
		} {
			code, loc, _ := get(t, site.c, s.srv.URL+site.base+acme+"/find?q="+url.QueryEscape(q))
			if code != http.StatusSeeOther || loc != site.base+want {
				t.Errorf("%s: find %q: %d → %q; want 303 → %s", site.base, q, code, loc, site.base+want)
			}
		}
		// Another application's message, endpoint and event id are not found from Acme's page.
		for _, q := range []string{gm.Message.ID, gep.ID, "gx_1", "msg_nothing"} {
			code, loc, body := get(t, site.c, s.srv.URL+site.base+acme+"/find?q="+url.QueryEscape(q))
			if code != http.StatusNotFound || loc != "" || !strings.Contains(body, "Nothing in Acme has the id or event id") {
				t.Errorf("%s: find %q: %d → %q; want 404 saying nothing has it:\n%s", site.base, q, code, loc, body)
			}
		}
		for _, q := range []string{"", "   ", strings.Repeat("x", 300)} {
			code, _, body := get(t, site.c, s.srv.URL+site.base+acme+"/find?q="+url.QueryEscape(q))
			if code != http.StatusBadRequest || !strings.Contains(body, "q: ") {
				t.Errorf("%s: find %.10q: %d; want 400 naming the field q:\n%s", site.base, q, code, body)
			}
		}
		if code, _, body := get(t, site.c, s.srv.URL+site.base+acme); !strings.Contains(body, `id="find"`) || code != http.StatusOK {
			t.Errorf("%s: the application's page (%d) has no search box", site.base, code)
		}
	}
	// Through Acme's portal, Globex's search is refused as any page of Globex's is.
	if code, loc, _ := get(t, portal, s.srv.URL+"/portal/app/"+s.globex.ID+"/find?q="+gm.Message.ID); code != http.StatusForbidden || loc != "" {
		t.Errorf("Globex's search through Acme's portal: %d → %q; want 403", code, loc)
	}
}

// TestMessageLogDeliveryCounts: without a status filter, each message of the log shows its
// deliveries by status: one delivered to the endpoint that answers 204, one pending at the one
// that answers 500 (its retry is due in an hour).
func TestMessageLogDeliveryCounts(t *testing.T) {
	s := newSite(t, true)
	ctx := context.Background()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer ok.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer failing.Close()
	for _, u := range []string{ok.URL + "/ok", failing.URL + "/failing"} {
		if _, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: u}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	want := `<td class="counts"><span class="status-delivered">1 delivered</span> <span class="status-pending">1 pending</span> </td>`
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, _, body = get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID)
		if strings.Contains(body, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log does not show %q under Deliveries:\n%s", want, body)
		}
	}
	if !strings.Contains(body, "<th>Deliveries</th>") {
		t.Errorf("the log has no Deliveries column:\n%s", body)
	}
}
