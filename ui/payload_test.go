package ui_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/hookd/hookd"
)

// signIn returns a browser signed in to the dashboard.
func signIn(t *testing.T, s *site) *http.Client {
	t.Helper()
	c := browser(t)
	if code, _, _ := post(t, c, s.srv.URL+"/ui/login", s.srv.URL, url.Values{"token": {adminToken}}); code != http.StatusSeeOther {
		t.Fatal("sign in failed")
	}
	return c
}

// nested is a payload nested depth levels deep: {"a":[[[...[1]...]]]}.
func nested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + "1" + strings.Repeat("]", depth-1) + "}"
}

// TestDeepPayloadPageIsSmall shows the message page of a payload nested 9,000 levels deep (54 KB,
// which the library takes from its trusted caller): indenting every level would make the page
// about 2d² bytes for depth d. The page allocates under 50 MiB in all, and shows the payload
// whole. It does not run in parallel, so the allocations are this test's.
func TestDeepPayloadPageIsSmall(t *testing.T) {
	s := newSite(t, false)
	m, err := s.client.Send(t.Context(), "acme", &hookd.MessageIn{EventType: "deep", Payload: json.RawMessage(nested(9000))})
	if err != nil {
		t.Fatal(err)
	}
	c := signIn(t, s)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, body := get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/msg/"+m.Message.ID)
	runtime.ReadMemStats(&after)
	if code != http.StatusOK {
		t.Fatalf("message page: %d", code)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
		t.Errorf("the page allocated %d MiB, want under 50", alloc>>20)
	}
	if len(body) > 1<<20 {
		t.Errorf("the page is %d bytes", len(body))
	}
	if strings.Contains(body, "payload-cut") {
		t.Error("a 54 KB payload is shown cut")
	}
	// The deep part is written compact, whole.
	if !strings.Contains(body, strings.Repeat("[", 8000)+"1"+strings.Repeat("]", 8000)) {
		t.Error("the payload's innermost levels are not on the page")
	}
}

// TestPayloadRendering: the page indents the payload, keeps its keys' order and its numbers as
// sent, and cuts a payload past 256 KiB with a link to the whole of it, which downloads the
// stored bytes.
func TestPayloadRendering(t *testing.T) {
	t.Parallel()
	s := newSite(t, false)
	c := signIn(t, s)
	m, err := s.client.Send(t.Context(), "acme", &hookd.MessageIn{EventType: "small",
		Payload: json.RawMessage(`{"z": 1.50, "a": {"b": [1, {}, []], "s": "x, \"[y]\": z"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/msg/"+m.Message.ID)
	want := "{\n  \"z\": 1.50,\n  \"a\": {\n    \"b\": [\n      1,\n      {},\n      []\n    ],\n    \"s\": \"x, \\\"[y]\\\": z\"\n  }\n}"
	pre := regexp.MustCompile(`(?s)<pre class="payload"[^>]*>(.*?)</pre>`).FindStringSubmatch(body)
	if pre == nil || html.UnescapeString(pre[1]) != want {
		t.Errorf("payload shown as\n%v\nwant\n%s", pre, want)
	}
	if strings.Contains(body, "payload-cut") {
		t.Error("a small payload is shown cut")
	}

	var big strings.Builder
	big.WriteString(`{"items":[`)
	for i := range 30_000 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"n":%d}`, i)
	}
	big.WriteString("]}")
	m, err = s.client.Send(t.Context(), "acme", &hookd.MessageIn{EventType: "big", Payload: json.RawMessage(big.String())})
	if err != nil {
		t.Fatal(err)
	}
	page := "/ui/app/" + s.acme.ID + "/msg/" + m.Message.ID
	_, _, body = get(t, c, s.srv.URL+page)
	if !strings.Contains(body, `class="muted payload-cut"`) || !strings.Contains(body, `href="`+page+`/payload"`) {
		t.Fatalf("a payload past 256 KiB is not cut with a link to the whole payload")
	}
	if len(body) > 400<<10 {
		t.Errorf("the page is %d bytes", len(body))
	}
	resp, err := c.Get(s.srv.URL + page + "/payload")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || string(raw) != big.String() ||
		resp.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Errorf("the whole payload: %d %q %q, %d bytes of %d", resp.StatusCode, resp.Header.Get("Content-Type"),
			resp.Header.Get("Content-Disposition"), len(raw), big.Len())
	}
}

// TestSendFormChecksAsTheAPI: the dashboard's and portal's send form refuse what the API refuses,
// an event type name off Svix's pattern and a payload nested past 128 levels, and store nothing.
func TestSendFormChecksAsTheAPI(t *testing.T) {
	t.Parallel()
	s := newSite(t, false)
	c := signIn(t, s)
	cases := []struct{ name, eventType, payload, field string }{
		{"a space in the event type", "invoice paid", `{"a":1}`, "eventType"},
		{"a colon in the event type", "invoice:paid", `{"a":1}`, "eventType"},
		{"a payload 129 levels deep", "invoice.paid", nested(129), "payload"},
	}
	for _, tc := range cases {
		code, _, body := post(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/send", s.srv.URL,
			url.Values{"eventType": {tc.eventType}, "payload": {tc.payload}})
		if code != http.StatusBadRequest || !strings.Contains(body, tc.field) {
			t.Errorf("%s: %d, want 400 naming %s", tc.name, code, tc.field)
		}
	}
	page, err := s.client.ListMessages(t.Context(), s.acme.ID, hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 0 {
		t.Errorf("%d messages stored, want none", len(page.Data))
	}
	if code, _, _ := post(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/send", s.srv.URL,
		url.Values{"eventType": {"invoice.paid"}, "payload": {nested(128)}}); code != http.StatusSeeOther {
		t.Errorf("a payload 128 levels deep: %d, want it sent", code)
	}
	if code, _, _ := get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"?type=invoice:paid"); code != http.StatusBadRequest {
		t.Errorf("the log filtered by an event type off the pattern: %d, want 400", code)
	}
}
