package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// TestEditEndpointOrdered: the endpoint page shows whether the endpoint is ordered, the edit form
// holds it and sets it on and off; a form without it keeps it, and a bad value is a 400 naming
// the field.
func TestEditEndpointOrdered(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID
	base := url.Values{"url": {"https://acme.example/hook"}, "scheme": {"standard"}}
	with := func(v string) url.Values {
		f := url.Values{"ordered": {v}}
		for k, vs := range base {
			f[k] = vs
		}
		return f
	}
	if _, _, body := get(t, c, page); !strings.Contains(body, `id="ordered">no<`) {
		t.Errorf("the endpoint page does not show it unordered:\n%s", body)
	}
	if code, _, body := post(t, c, page+"/edit", s.srv.URL, with("on")); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); !got.Ordered {
		t.Fatal("after ordered=on: not ordered")
	}
	if _, _, body := get(t, c, page); !strings.Contains(body, `id="ordered">yes`) {
		t.Errorf("the endpoint page does not show it ordered:\n%s", body)
	}
	if _, _, body := get(t, c, page+"/edit"); !strings.Contains(body, `<option value="on" selected>on</option>`) {
		t.Errorf("the edit form does not hold it:\n%s", body)
	}
	if code, _, _ := post(t, c, page+"/edit", s.srv.URL, base); code != http.StatusSeeOther {
		t.Fatal(code)
	}
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); !got.Ordered {
		t.Error("a form without the field turned it off")
	}
	post(t, c, page+"/edit", s.srv.URL, with("off"))
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); got.Ordered {
		t.Error("after ordered=off: still ordered")
	}
	if code, _, body := post(t, c, page+"/edit", s.srv.URL, with("sometimes")); code != http.StatusBadRequest || !strings.Contains(body, "ordered: ") {
		t.Errorf("bad ordered: %d; want 400 naming the field:\n%s", code, body)
	}
}
