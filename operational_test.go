package hookd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
	"github.com/hookd/hookd/signature"
)

// Operational events reach the operator's URL as signed webhooks, in Svix's envelope.
func TestOperationalWebhooks(t *testing.T) {
	t.Parallel()
	recv := hookdtest.NewReceiver()
	defer recv.Close()
	secret := signature.NewSecret()
	if err := recv.SetSecret("/ops", secret); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.OperationalWebhookURL = recv.URL("/ops")
	cfg.OperationalWebhookSecret = secret
	b := setup(t, cfg)

	ep := b.endpoint(t, "/gone", hookdtest.Gone("removed"), nil)
	b.send(t, "acme", &hookd.MessageIn{EventType: "invoice.paid"})
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	reqs, err := recv.Wait(ctx, "/ops", 2)
	if err != nil {
		t.Fatalf("operational webhooks: %v (got %d)", err, len(reqs))
	}
	types := map[string]bool{}
	for _, r := range reqs {
		if !r.Verified {
			t.Errorf("operational webhook not verified: %v", r.VerifyErr)
		}
		var body struct {
			Type string `json:"type"`
			Data struct {
				AppID      string `json:"appId"`
				EndpointID string `json:"endpointId"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("body %s: %v", r.Body, err)
		}
		if body.Data.EndpointID != ep.ID || body.Data.AppID != b.app.ID {
			t.Errorf("%s about %s/%s, want %s/%s", body.Type, body.Data.AppID, body.Data.EndpointID, b.app.ID, ep.ID)
		}
		types[body.Type] = true
	}
	if !types[hookd.OpEndpointCreated] || !types[hookd.OpEndpointDisabled] {
		t.Fatalf("got %v, want endpoint.created and endpoint.disabled", types)
	}
	if err := b.client.DeleteEndpoint(b.ctx, "acme", ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := recv.Wait(ctx, "/ops", 3); err != nil {
		t.Fatalf("endpoint.deleted not sent: %v", err)
	}

	// A failing operator endpoint exhausts its retries like any other, and the events about the
	// operator's own application are recorded but not sent to it: no loop.
	recv.Handle("/ops", hookdtest.Status(http.StatusInternalServerError, "down"))
	other := b.endpoint(t, "/other", nil, nil)
	before := len(recv.Requests("/ops"))
	if err := b.client.DeleteEndpoint(b.ctx, "acme", other.ID); err != nil {
		t.Fatal(err)
	}
	for {
		page, err := b.client.ListOperationalEvents(b.ctx, hookd.ListOptions{Limit: 250})
		if err != nil {
			t.Fatal(err)
		}
		if hasOpType(page.Data, hookd.OpMessageAttemptExhausted) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the operator endpoint's delivery never exhausted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	// endpoint.created and endpoint.deleted of /other: 1 + 3 retries each at most.
	if got := len(recv.Requests("/ops")) - before; got > 8 {
		t.Fatalf("the operator endpoint got %d requests after it began failing, want at most 8", got)
	}
}

func hasOpType(evs []hookd.OperationalEvent, typ string) bool {
	for _, e := range evs {
		if e.Type == typ {
			return true
		}
	}
	return false
}
