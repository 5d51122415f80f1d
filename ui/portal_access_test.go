package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// openPortal follows a portal link for token in a new browser and returns it.
func (s *site) openPortal(t *testing.T, token string) *http.Client {
	t.Helper()
	c := browser(t)
	if code, loc, _ := get(t, c, s.srv.URL+"/portal?token="+url.QueryEscape(token)); code != http.StatusSeeOther || loc != "/portal/app/"+s.acme.ID {
		t.Fatalf("portal link: %d → %q", code, loc)
	}
	return c
}

// portalToken mints a portal token for Acme that authenticates as p.
func (s *site) portalToken(t *testing.T, p server.Principal) string {
	t.Helper()
	p.AppID = s.acme.ID
	tok, err := s.auth.IssueToken(context.Background(), p, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestReadOnlyPortal: with a read-only token the portal's pages show no form that writes (sign-out
// and the log's filter stay), and every form's POST is refused with 403 and changes nothing; a
// token that may write sees the forms and may use them.
func TestReadOnlyPortal(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	if _, err := s.client.UpsertEventType(ctx, &hookd.EventType{Name: "invoice.paid"}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	base := "/portal/app/" + s.acme.ID
	pages := []string{base, base + "/endpoint/" + ep.ID, base + "/msg/" + m.Message.ID}
	writeForms := []string{`id="add-endpoint"`, `id="send-example"`, `id="change-scheme"`, `id="disable"`, `id="reveal"`, `id="rotate"`, `id="recover"`, `class="resend"`}

	rw := s.openPortal(t, s.portalToken(t, server.Principal{}))
	var shown string
	for _, p := range pages {
		code, _, body := get(t, rw, s.srv.URL+p)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", p, code)
		}
		shown += body
	}
	for _, f := range writeForms {
		if !strings.Contains(shown, f) {
			t.Errorf("a portal token that may write is not shown %s", f)
		}
	}

	ro := s.openPortal(t, s.portalToken(t, server.Principal{ReadOnly: true}))
	for _, p := range pages {
		code, _, body := get(t, ro, s.srv.URL+p)
		if code != http.StatusOK {
			t.Fatalf("%s read-only: %d", p, code)
		}
		for _, f := range writeForms {
			if strings.Contains(body, f) {
				t.Errorf("%s read-only shows %s", p, f)
			}
		}
		if posts, logouts := strings.Count(body, `method="post"`), strings.Count(body, `action="/portal/logout"`); posts != logouts {
			t.Errorf("%s read-only has %d POST forms besides sign-out", p, posts-logouts)
		}
		if !strings.Contains(body, "Sign out") {
			t.Errorf("%s read-only has no sign-out", p)
		}
	}

	secret, err := s.client.EndpointSecret(ctx, s.acme.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	before := s.acmeState(t)
	one := base + "/endpoint/" + ep.ID
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{base + "/endpoints", url.Values{"url": {"https://acme.example/new"}}},
		{base + "/send", url.Values{"eventType": {"invoice.paid"}, "payload": {`{"n":2}`}}},
		{one + "/disable", nil},
		{one + "/enable", nil},
		{one + "/rotate", nil},
		{one + "/reveal", nil},
		{one + "/scheme", url.Values{"scheme": {"stripe"}}},
		{one + "/recover", url.Values{"since": {time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")}}},
		{base + "/msg/" + m.Message.ID + "/resend/" + ep.ID, nil},
	} {
		code, _, body := post(t, ro, s.srv.URL+c.path, s.srv.URL, c.form)
		if code != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("POST %s read-only: %d, want 403", c.path, code)
		}
		if strings.Contains(body, secret) {
			t.Errorf("POST %s read-only shows the secret", c.path)
		}
	}
	if after := s.acmeState(t); after != before {
		t.Errorf("read-only POSTs changed Acme:\n%s\nbecame\n%s", before, after)
	}
	if code, _, _ := post(t, rw, s.srv.URL+one+"/disable", s.srv.URL, nil); code != http.StatusSeeOther {
		t.Errorf("disable with a token that may write: %d, want 303", code)
	}
	if got, err := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); err != nil || !got.Disabled {
		t.Errorf("the endpoint is not disabled: %v", err)
	}
}

// acmeState is what the portal's forms change of Acme: its endpoints with their settings and
// secrets, and its messages.
func (s *site) acmeState(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	eps, err := s.client.ListEndpoints(ctx, s.acme.ID, hookd.ListOptions{Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ep := range eps.Data {
		secret, err := s.client.EndpointSecret(ctx, s.acme.ID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(ep.ID + " " + ep.URL + " " + string(ep.Scheme) + " " + secret + " " + ep.UpdatedAt.String())
		if ep.Disabled {
			b.WriteString(" disabled")
		}
		b.WriteString("\n")
	}
	msgs, err := s.client.ListMessages(ctx, s.acme.ID, hookd.MessageFilter{ListOptions: hookd.ListOptions{Limit: 250}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.Data {
		b.WriteString(m.ID + "\n")
	}
	dels, err := s.client.ListDeliveries(ctx, s.acme.ID, hookd.DeliveryFilter{ListOptions: hookd.ListOptions{Limit: 250}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dels.Data {
		fmt.Fprintf(&b, "%s %s %v\n", d.ID, d.Status, d.NextAttemptAt)
	}
	return b.String()
}

// TestPortalPickersHideFlaggedTypes: the portal's event type pickers offer an event type gated by a
// feature flag only to a token holding the flag, and adding an endpoint on a hidden one is refused
// as one that does not exist; the dashboard offers every event type.
func TestPortalPickersHideFlaggedTypes(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	for _, et := range []hookd.EventType{{Name: "invoice.paid"}, {Name: "beta.thing", FeatureFlags: []string{"beta"}}} {
		if _, err := s.client.UpsertEventType(ctx, &et); err != nil {
			t.Fatal(err)
		}
	}
	admin := browser(t)
	if code, _, _ := post(t, admin, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	if _, _, body := get(t, admin, s.srv.URL+"/ui/app/"+s.acme.ID); !strings.Contains(body, `value="beta.thing"`) {
		t.Error("the dashboard does not offer a flagged event type")
	}

	page := "/portal/app/" + s.acme.ID
	plain := s.openPortal(t, s.portalToken(t, server.Principal{}))
	_, _, body := get(t, plain, s.srv.URL+page)
	if strings.Contains(body, "beta.thing") || !strings.Contains(body, `value="invoice.paid"`) {
		t.Errorf("a token without the flag is offered:\n%s", body)
	}
	for _, types := range [][]string{{"beta.thing"}, {"invoice.paid", "beta.thing"}, {"no.such.type"}} {
		code, _, body := post(t, plain, s.srv.URL+page+"/endpoints", s.srv.URL, url.Values{"url": {"https://acme.example/x"}, "eventTypes": types})
		if code != http.StatusBadRequest || !strings.Contains(body, "don&#39;t exist: "+types[len(types)-1]) {
			t.Errorf("add an endpoint on %v without the flag: %d\n%s", types, code, body)
		}
	}
	if eps, err := s.client.ListEndpoints(ctx, s.acme.ID, hookd.ListOptions{Limit: 10}); err != nil || len(eps.Data) != 0 {
		t.Fatalf("endpoints after the refusals: %v, %v", eps, err)
	}
	if code, _, _ := post(t, plain, s.srv.URL+page+"/endpoints", s.srv.URL, url.Values{"url": {"https://acme.example/x"}, "eventTypes": {"invoice.paid"}}); code != http.StatusSeeOther {
		t.Errorf("add an endpoint on a visible event type: %d", code)
	}

	flagged := s.openPortal(t, s.portalToken(t, server.Principal{FeatureFlags: []string{"beta"}}))
	if _, _, body := get(t, flagged, s.srv.URL+page); !strings.Contains(body, `value="beta.thing"`) {
		t.Error("a token with the flag is not offered the flagged event type")
	}
	if code, _, body := post(t, flagged, s.srv.URL+page+"/endpoints", s.srv.URL, url.Values{"url": {"https://acme.example/y"}, "eventTypes": {"beta.thing"}}); code != http.StatusSeeOther {
		t.Errorf("add an endpoint on beta.thing with the flag: %d\n%s", code, body)
	}
}
