package hookd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

func TestCheckEventTypeName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"invoice.paid", true},
		{"A-Z_a-z.0-9", true},
		{strings.Repeat("x", 256), true},
		{"", false},
		{strings.Repeat("x", 257), false},
		{"invoice paid", false},
		{"invoice:paid", false},
		{"invoice/paid", false},
		{"facture.payée", false},
	} {
		err := hookd.CheckEventTypeName("eventType", c.name)
		var ve *hookd.ValidationError
		switch {
		case c.ok && err != nil:
			t.Errorf("%.20q: %v, want accepted", c.name, err)
		case !c.ok && (!errors.As(err, &ve) || ve.Field != "eventType"):
			t.Errorf("%.20q: %v, want a *ValidationError naming eventType", c.name, err)
		}
	}
}

// TestEventTypeNameEverywhere: Send, UpsertEventType and an endpoint's EventTypes hold names to
// the API's pattern, so that every name the library stores is one the API can filter by.
func TestEventTypeNameEverywhere(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	_, err := b.client.Send(b.ctx, b.app.ID, &hookd.MessageIn{EventType: "invoice:paid", Payload: map[string]int{"n": 1}})
	checkInvalid(t, "Send", err, "eventType")
	_, err = b.client.UpsertEventType(b.ctx, &hookd.EventType{Name: "invoice paid"})
	checkInvalid(t, "UpsertEventType", err, "name")
	_, err = b.client.CreateEndpoint(b.ctx, b.app.ID, &hookd.EndpointIn{URL: "https://example.com/", EventTypes: []string{"invoice/paid"}})
	checkInvalid(t, "CreateEndpoint", err, "filterTypes")
	page, err := b.client.ListMessages(b.ctx, b.app.ID, hookd.MessageFilter{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("%d messages stored (%v), want none", len(page.Data), err)
	}
}
