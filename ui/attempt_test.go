package ui_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// TestAttemptPage: an attempt's page shows the request as sent (URL, the signature headers, the
// endpoint's own header redacted, the body), the response (status, headers, body), the trigger
// and when the next attempt is due; the portal shows it for its application only.
func TestAttemptPage(t *testing.T) {
	s := newSite(t, true)
	ctx := context.Background()
	sent := make(chan http.Header, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- r.Header.Clone()
		w.Header().Set("X-Receiver", "busy")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"boom"}`))
	}))
	defer rcv.Close()
	_, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: rcv.URL + "/hook",
		Headers: map[string]string{"X-Api-Key": "tenant-credential-42"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]string{"invoice": "in_77"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Message.ID
	var a hookd.Attempt
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		page, err := s.client.ListAttempts(ctx, s.acme.ID, hookd.AttemptFilter{MessageID: msg})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) > 0 {
			a = page.Data[len(page.Data)-1] // the first attempt, whose request arrived first
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt within 10 s")
		}
	}
	path := "/app/" + s.acme.ID + "/msg/" + msg + "/attempt/" + a.ID
	dash := s.signIn(t)
	code, _, body := get(t, dash, s.srv.URL+"/ui"+path)
	if code != http.StatusOK {
		t.Fatalf("the attempt's page: %d\n%s", code, body)
	}
	for _, want := range []string{
		"POST " + rcv.URL + "/hook",
		"<code>Webhook-Signature</code></td><td><code>v1,",
		"<code>Webhook-Id</code></td><td><code>" + msg + "</code>",
		"<code>X-Api-Key</code></td><td><code>[redacted]</code>",
		`in_77`,
		`HTTP <strong id="response-status">500</strong>`,
		"<code>X-Receiver</code></td><td><code>busy</code>",
		`{&#34;error&#34;:&#34;boom&#34;}`,
		`<dd id="trigger">scheduled</dd>`,
		`<dd id="next-attempt">due `,
		`data-copy="attempt-id"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the attempt's page does not show %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "tenant-credential-42") {
		t.Error("the attempt's page shows the endpoint's credential")
	}
	// Every header that arrived is on the page as it arrived (but for those the transport adds
	// on the wire, and the endpoint's own, redacted); the first request is the first attempt's.
	arrived := <-sent
	arrived.Del("Accept-Encoding")
	arrived.Del("Content-Length")
	arrived.Set("X-Api-Key", hookd.Redacted)
	text := html.UnescapeString(body)
	for k, vs := range arrived {
		for _, v := range vs {
			if !strings.Contains(text, "<code>"+k+"</code></td><td><code>"+v+"</code>") {
				t.Errorf("the attempt's page does not show the header %s: %s that arrived", k, v)
			}
		}
	}

	// The portal shows Acme's attempt; not through another message, not through Globex's pages.
	portal := s.openPortal(t, s.portalToken(t, server.Principal{ReadOnly: true}))
	if code, _, body := get(t, portal, s.srv.URL+"/portal"+path); code != http.StatusOK || !strings.Contains(body, "[redacted]") {
		t.Errorf("the portal's attempt page: %d", code)
	}
	other, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 2}})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]int{
		"/portal/app/" + s.acme.ID + "/msg/" + other.Message.ID + "/attempt/" + a.ID: http.StatusNotFound,
		"/portal/app/" + s.acme.ID + "/msg/" + msg + "/attempt/atmpt_missing":        http.StatusNotFound,
		"/portal/app/" + s.globex.ID + "/msg/" + msg + "/attempt/" + a.ID:            http.StatusForbidden,
	} {
		if code, _, body := get(t, portal, s.srv.URL+p); code != want || strings.Contains(body, "busy") {
			t.Errorf("%s: %d; want %d without the attempt", p, code, want)
		}
	}
}

// TestPagesScriptCSP: the pages allow their own script only, and serve it.
func TestPagesScriptCSP(t *testing.T) {
	s := newSite(t, false)
	resp, err := http.Get(s.srv.URL + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q; want script-src 'self' and nothing unsafe", csp)
	}
	for _, p := range []string{"/ui/static/pages.js", "/portal/static/pages.js"} {
		code, _, body := get(t, browser(t), s.srv.URL+p)
		if code != http.StatusOK || !strings.Contains(body, "data-copy") {
			t.Errorf("%s: %d", p, code)
		}
	}
}
