package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// TestEditEndpoint: the edit form changes the URL, description, event types, channels, rate
// limit, headers and scheme; it never shows a header's value, and a value left as [redacted]
// keeps it; bad input is a 400 naming the field, and changes nothing.
func TestEditEndpoint(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	if _, err := s.client.UpsertEventType(ctx, &hookd.EventType{Name: "invoice.paid"}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook",
		Headers: map[string]string{"X-Api-Key": "tenant-credential-42", "X-Old": "gone"}})
	if err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID
	code, _, body := get(t, c, page+"/edit")
	if code != http.StatusOK || !strings.Contains(body, `id="edit-endpoint"`) || !strings.Contains(body, "X-Api-Key: [redacted]") {
		t.Fatalf("the edit form: %d\n%s", code, body)
	}
	if strings.Contains(body, "tenant-credential-42") {
		t.Error("the edit form shows a header's value")
	}
	form := url.Values{"url": {"https://acme.example/new"}, "description": {"billing"}, "eventTypes": {"invoice.paid"},
		"channels": {"eu, project-1"}, "rateLimit": {"5"}, "headers": {"X-Api-Key: [redacted]\nX-Trace: on"}, "scheme": {"stripe"}}
	if code, loc, body := post(t, c, page+"/edit", s.srv.URL, form); code != http.StatusSeeOther || loc != "/ui/app/"+s.acme.ID+"/endpoint/"+ep.ID+"?flash=saved" {
		t.Fatalf("save: %d → %q\n%s", code, loc, body)
	}
	got, err := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"X-Api-Key": "tenant-credential-42", "X-Trace": "on"}
	if got.URL != "https://acme.example/new" || got.Description != "billing" || !slices.Equal(got.EventTypes, []string{"invoice.paid"}) ||
		!slices.Equal(got.Channels, []string{"eu", "project-1"}) || got.RateLimit != 5 || got.Scheme != hookd.SchemeStripe ||
		len(got.Headers) != 2 || got.Headers["X-Api-Key"] != want["X-Api-Key"] || got.Headers["X-Trace"] != "on" {
		t.Errorf("after the edit: %+v", got)
	}
	for field, f := range map[string]url.Values{
		"rateLimit":  {"url": {"https://acme.example/x"}, "rateLimit": {"fast"}},
		"headers":    {"url": {"https://acme.example/x"}, "headers": {"no colon here"}},
		"url":        {"url": {"ftp://acme.example/x"}},
		"eventTypes": {"url": {"https://acme.example/x"}, "eventTypes": {"never.made"}},
	} {
		code, _, body := post(t, c, page+"/edit", s.srv.URL, f)
		if code != http.StatusBadRequest || !strings.Contains(body, field+": ") {
			t.Errorf("bad %s: %d; want 400 naming the field:\n%s", field, code, body)
		}
	}
	if after, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); after.URL != "https://acme.example/new" {
		t.Errorf("a refused edit changed the URL to %s", after.URL)
	}
}

// TestDeleteEndpoint: delete asks first; the confirmation's form deletes; a POST without it is
// refused.
func TestDeleteEndpoint(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID
	if code, _, body := get(t, c, page+"/delete"); code != http.StatusOK || !strings.Contains(body, "Delete this endpoint?") || !strings.Contains(body, `name="confirm" value="delete"`) {
		t.Fatalf("the confirmation: %d\n%s", code, body)
	}
	if code, _, body := post(t, c, page+"/delete", s.srv.URL, nil); code != http.StatusBadRequest || !strings.Contains(body, "confirm: ") {
		t.Errorf("delete without the confirmation: %d\n%s", code, body)
	}
	if _, err := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); err != nil {
		t.Fatalf("the endpoint is gone without the confirmation: %v", err)
	}
	if code, loc, _ := post(t, c, page+"/delete", s.srv.URL, url.Values{"confirm": {"delete"}}); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/app/"+s.acme.ID+"?flash=") {
		t.Errorf("delete: %d → %q", code, loc)
	}
	if _, err := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); err == nil {
		t.Error("the endpoint is still there")
	}
	if code, _, _ := get(t, c, page+"/delete"); code != http.StatusNotFound {
		t.Errorf("the deleted endpoint's delete page: %d; want 404", code)
	}
}

// TestSendTestEvent: "send test event" sends the chosen event type's schema example to this
// endpoint alone; svix.ping sends {"success":true}; an event type the portal's token may not
// see is refused as one that does not exist.
func TestSendTestEvent(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	schema := json.RawMessage(`{"1":{"type":"object","examples":[{"invoice":"in_1","paid":true}]}}`)
	if _, err := s.client.UpsertEventType(ctx, &hookd.EventType{Name: "invoice.paid", Schemas: schema}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.UpsertEventType(ctx, &hookd.EventType{Name: "beta.thing", FeatureFlags: []string{"beta"}}); err != nil {
		t.Fatal(err)
	}
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/one"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/other"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID
	if _, _, body := get(t, c, page); !strings.Contains(body, `<option value="invoice.paid">`) || !strings.Contains(body, `id="test-event"`) {
		t.Fatalf("the endpoint's page offers no test event of invoice.paid:\n%s", body)
	}
	for typ, want := range map[string]string{"invoice.paid": `{"invoice":"in_1","paid":true}`, "svix.ping": `{"success":true}`} {
		code, loc, body := post(t, c, page+"/test", s.srv.URL, url.Values{"eventType": {typ}})
		prefix := "/ui/app/" + s.acme.ID + "/msg/"
		if code != http.StatusSeeOther || !strings.HasPrefix(loc, prefix) {
			t.Fatalf("send %s: %d → %q\n%s", typ, code, loc, body)
		}
		msgID := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], prefix)
		m, err := s.client.GetMessage(ctx, s.acme.ID, msgID)
		if err != nil {
			t.Fatal(err)
		}
		var gotV, wantV any
		_ = json.Unmarshal(m.Payload, &gotV)
		_ = json.Unmarshal([]byte(want), &wantV)
		if string(mustJSON(t, gotV)) != string(mustJSON(t, wantV)) || m.EventType != typ {
			t.Errorf("send %s: the message is %s %s; want %s", typ, m.EventType, m.Payload, want)
		}
		ds, err := s.client.ListDeliveries(ctx, s.acme.ID, hookd.DeliveryFilter{MessageID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds.Data) != 1 || ds.Data[0].EndpointID != ep.ID {
			t.Errorf("send %s: delivered to %+v; want %s alone (not %s)", typ, ds.Data, ep.ID, other.ID)
		}
	}
	if code, _, body := post(t, c, page+"/test", s.srv.URL, url.Values{"eventType": {""}}); code != http.StatusBadRequest || !strings.Contains(body, "eventType: ") {
		t.Errorf("no event type: %d\n%s", code, body)
	}
	portal := s.openPortal(t, s.portalToken(t, server.Principal{}))
	ppage := s.srv.URL + "/portal/app/" + s.acme.ID + "/endpoint/" + ep.ID
	if code, _, body := post(t, portal, ppage+"/test", s.srv.URL, url.Values{"eventType": {"beta.thing"}}); code != http.StatusBadRequest || !strings.Contains(body, "eventTypes: ") {
		t.Errorf("the portal's test event of a hidden event type: %d\n%s", code, body)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEditEndpointRetryPolicy: the endpoint page shows the retry policy and the edit form sets
// it, clears it (empty: the application's) and sets no retries; bad input and a policy over the
// server's bounds (its schedule is one hour-long wait) are a 400 naming the field.
func TestEditEndpointRetryPolicy(t *testing.T) {
	s := newSite(t, false)
	ctx := context.Background()
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: "https://acme.example/hook"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	page := s.srv.URL + "/ui/app/" + s.acme.ID + "/endpoint/" + ep.ID
	base := url.Values{"url": {"https://acme.example/hook"}, "scheme": {"standard"}}
	with := func(kv ...string) url.Values {
		f := url.Values{}
		for k, v := range base {
			f[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	if code, _, body := post(t, c, page+"/edit", s.srv.URL, with("retrySchedule", "30s", "attemptTimeout", "1.5s")); code != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", code, body)
	}
	got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID)
	if !slices.Equal(got.RetrySchedule, []time.Duration{30 * time.Second}) || got.AttemptTimeout != 1500*time.Millisecond {
		t.Fatalf("after the edit: %v, %v", got.RetrySchedule, got.AttemptTimeout)
	}
	if _, _, body := get(t, c, page); !strings.Contains(body, `id="retry-schedule"><code>30s</code>`) || !strings.Contains(body, `id="attempt-timeout"><code>1.5s</code>`) {
		t.Errorf("the endpoint page does not show the policy:\n%s", body)
	}
	if _, _, body := get(t, c, page+"/edit"); !strings.Contains(body, `name="retrySchedule" type="text" value="30s"`) {
		t.Errorf("the edit form does not hold the schedule:\n%s", body)
	}
	// A form without the fields keeps them; "none" is no retries; empty inherits.
	if code, _, _ := post(t, c, page+"/edit", s.srv.URL, base); code != http.StatusSeeOther {
		t.Fatal(code)
	}
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); got.AttemptTimeout != 1500*time.Millisecond {
		t.Errorf("a form without the timeout changed it to %v", got.AttemptTimeout)
	}
	post(t, c, page+"/edit", s.srv.URL, with("retrySchedule", "none", "attemptTimeout", ""))
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); got.RetrySchedule == nil || len(got.RetrySchedule) != 0 || got.AttemptTimeout != 0 {
		t.Errorf("after none / empty: %v, %v", got.RetrySchedule, got.AttemptTimeout)
	}
	post(t, c, page+"/edit", s.srv.URL, with("retrySchedule", ""))
	if got, _ := s.client.GetEndpoint(ctx, s.acme.ID, ep.ID); got.RetrySchedule != nil {
		t.Errorf("after an empty schedule: %v, want inherit", got.RetrySchedule)
	}
	for field, f := range map[string]url.Values{
		"retrySchedule":  with("retrySchedule", "soon"),
		"attemptTimeout": with("attemptTimeout", "-1s"),
	} {
		if code, _, body := post(t, c, page+"/edit", s.srv.URL, f); code != http.StatusBadRequest || !strings.Contains(body, field+": ") {
			t.Errorf("bad %s: %d; want 400 naming the field:\n%s", field, code, body)
		}
	}
	for field, f := range map[string]url.Values{
		"retrySchedule":  with("retrySchedule", "2h"),
		"attemptTimeout": with("attemptTimeout", "10m"),
	} {
		if code, _, body := post(t, c, page+"/edit", s.srv.URL, f); code != http.StatusBadRequest || !strings.Contains(body, field+": ") {
			t.Errorf("%s over the bound: %d; want 400 naming the field:\n%s", field, code, body)
		}
	}
}
