package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// TestEndpointSchemeForm sets the signing scheme from the dashboard: the add form's select, and the
// endpoint page's select that changes it. An unknown value is refused and changes nothing.
func TestEndpointSchemeForm(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	appPage := s.srv.URL + "/ui/app/" + s.acme.ID
	if _, _, body := get(t, c, appPage); !strings.Contains(body, `<select id="scheme" name="scheme">`) || !strings.Contains(body, `<option value="stripe">`) {
		t.Fatalf("the add form has no scheme select:\n%s", body)
	}
	code, loc, body := post(t, c, appPage+"/endpoints", s.srv.URL, url.Values{"url": {"https://example.com/stripe"}, "scheme": {"stripe"}})
	if code != http.StatusSeeOther {
		t.Fatalf("add endpoint: %d\n%s", code, body)
	}
	eps, err := s.client.ListEndpoints(ctx, "acme", hookd.ListOptions{})
	if err != nil || len(eps.Data) != 1 || eps.Data[0].Scheme != hookd.SchemeStripe {
		t.Fatalf("after the add form: %+v, %v; want one stripe endpoint", eps, err)
	}
	ep := eps.Data[0]
	epPage := s.srv.URL + loc[:strings.Index(loc, "?")]
	if _, _, body := get(t, c, epPage); !strings.Contains(body, `<option value="stripe" selected>`) {
		t.Fatalf("the endpoint page does not show stripe selected:\n%s", body)
	}

	action := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID + "/scheme"
	if code, _, body := post(t, c, action, s.srv.URL, url.Values{"scheme": {"envelope"}}); code != http.StatusSeeOther {
		t.Fatalf("change scheme: %d\n%s", code, body)
	}
	if got, _ := s.client.GetEndpoint(ctx, "acme", ep.ID); got.Scheme != hookd.SchemeEnvelope {
		t.Errorf("scheme after the change: %q, want envelope", got.Scheme)
	}
	if code, _, _ := post(t, c, action, s.srv.URL, url.Values{"scheme": {"carrier-pigeon"}}); code < 400 || code >= 500 {
		t.Errorf("an unknown scheme: %d, want a 4xx", code)
	}
	if code, _, _ := post(t, c, appPage+"/endpoints", s.srv.URL, url.Values{"url": {"https://example.com/x"}, "scheme": {"carrier-pigeon"}}); code < 400 || code >= 500 {
		t.Errorf("add with an unknown scheme: %d, want a 4xx", code)
	}
	if got, _ := s.client.GetEndpoint(ctx, "acme", ep.ID); got.Scheme != hookd.SchemeEnvelope {
		t.Errorf("scheme after a refused change: %q, want envelope", got.Scheme)
	}
	if eps, _ := s.client.ListEndpoints(ctx, "acme", hookd.ListOptions{}); len(eps.Data) != 1 {
		t.Errorf("%d endpoints after a refused add, want 1", len(eps.Data))
	}
}
