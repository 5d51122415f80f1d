package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// TestEventTypeCatalogue: the catalogue lists the event types with their descriptions, schemas
// and examples; the portal shows only those its token may see, and nothing archived.
func TestEventTypeCatalogue(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	for _, et := range []*hookd.EventType{
		{Name: "invoice.paid", Description: "An invoice was paid in full.",
			Schemas: json.RawMessage(`{"1":{"type":"object","examples":[{"invoice":"in_old"}]},"2":{"type":"object","properties":{"invoice":{"type":"string"}},"examples":[{"invoice":"in_1001"}]}}`)},
		{Name: "beta.thing", Description: "Only for the beta.", FeatureFlags: []string{"beta"}},
		{Name: "old.thing", Description: "Archived."},
	} {
		if _, err := s.client.UpsertEventType(ctx, et); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.client.DeleteEventType(ctx, "old.thing", false); err != nil {
		t.Fatal(err)
	}
	path := "/app/" + s.acme.ID + "/event-types"
	code, _, body := get(t, s.signIn(t), s.srv.URL+"/ui"+path)
	if code != http.StatusOK {
		t.Fatalf("the dashboard's catalogue: %d", code)
	}
	for _, want := range []string{
		`id="et-invoice.paid"`, "An invoice was paid in full.", "Example payload",
		"&#34;invoice&#34;: &#34;in_1001&#34;", // the newest version's example
		"Schema, version 2", "Schema, version 1",
		`id="et-beta.thing"`, "Shown on the portal only to tokens with <code>beta</code>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the dashboard's catalogue does not show %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "old.thing") || strings.Index(body, "Schema, version 2") > strings.Index(body, "Schema, version 1") {
		t.Errorf("the catalogue shows an archived type, or the schemas oldest first:\n%s", body)
	}
	for _, tc := range []struct {
		flags    []string
		seesBeta bool
	}{{nil, false}, {[]string{"beta"}, true}} {
		c := s.openPortal(t, s.portalToken(t, server.Principal{ReadOnly: true, FeatureFlags: tc.flags}))
		code, _, body := get(t, c, s.srv.URL+"/portal"+path)
		if code != http.StatusOK || !strings.Contains(body, `id="et-invoice.paid"`) {
			t.Fatalf("the portal's catalogue with flags %v: %d\n%s", tc.flags, code, body)
		}
		if got := strings.Contains(body, "beta.thing"); got != tc.seesBeta {
			t.Errorf("the portal's catalogue with flags %v shows beta.thing: %v; want %v", tc.flags, got, tc.seesBeta)
		}
		if strings.Contains(body, "Shown on the portal only") {
			t.Error("the portal names the feature flags")
		}
		if code, _, _ := get(t, c, s.srv.URL+"/portal/app/"+s.globex.ID+"/event-types"); code != http.StatusForbidden {
			t.Errorf("Globex's catalogue through Acme's portal: %d; want 403", code)
		}
	}
}
