package server

import (
	"net"
	"net/http"
	"slices"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/hookdtest"
)

// with_msg on the attempts of an endpoint gives each attempt its message (without its payload, as
// Svix documents), in both generations; without it there is no msg. statusText is today's alone.
func TestAttemptsWithMsg(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	f := mtSetup(t, b, "wm", "/wm", hookdtest.FailTimes(1, http.StatusInternalServerError, "boom"), nil)
	var sent []*hookd.Message
	for i, et := range []string{"a.one", "a.two"} {
		res, err := b.client.Send(b.ctx, "wm", &hookd.MessageIn{EventType: et, EventID: "evt-" + et, Channels: []string{"c"}, Payload: map[string]any{"i": i}})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, res.Message)
	}
	mtEventually(t, "three attempts", func() bool {
		l, err := b.svix.MessageAttempt.ListByEndpoint(b.ctx, "wm", f.ep.ID, nil)
		return err == nil && len(l.Data) == 3
	})
	byID := map[string]*hookd.Message{sent[0].ID: sent[0], sent[1].ID: sent[1]}
	path := "/api/v1/app/wm/attempt/endpoint/" + f.ep.ID
	for _, gen := range []string{"", "1.44"} {
		body := mtJSON(t, b.do(t, "GET", path+"?with_msg=true", "", "X-Hookd-Api-Generation", gen))
		data, _ := body["data"].([]any)
		if len(data) != 3 {
			t.Fatalf("with_msg (%q): %v", gen, body)
		}
		fails := 0
		for _, item := range data {
			at := item.(map[string]any)
			msg, _ := at["msg"].(map[string]any)
			m := byID[at["msgId"].(string)]
			if m == nil || msg == nil || msg["id"] != m.ID || msg["eventType"] != m.EventType || msg["eventId"] != m.EventID ||
				!slices.Equal(mtKeys(msg), msgKeys) || len(msg["payload"].(map[string]any)) != 0 {
				t.Fatalf("with_msg (%q): attempt %v", gen, at)
			}
			want := append(slices.Clone(attemptKeysCurrent), "msg")
			if gen == "1.44" {
				want = append(slices.Clone(attemptKeysV144), "msg")
			}
			slices.Sort(want)
			if got := mtKeys(at); !slices.Equal(got, want) {
				t.Errorf("with_msg (%q): keys %v, want %v", gen, got, want)
			}
			if at["responseStatusCode"] == 500.0 {
				fails++
				if gen == "" && at["statusText"] != "fail" {
					t.Errorf("failed attempt's statusText %v", at["statusText"])
				}
			}
		}
		if fails != 1 {
			t.Errorf("with_msg (%q): %d failed attempts, want 1", gen, fails)
		}
		body = mtJSON(t, b.do(t, "GET", path, "", "X-Hookd-Api-Generation", gen))
		for _, item := range body["data"].([]any) {
			if _, ok := item.(map[string]any)["msg"]; ok {
				t.Fatalf("msg without with_msg (%q): %v", gen, item)
			}
		}
	}
	// The Go SDK v1.44.0 reads it.
	withMsg := true
	l, err := b.svix.MessageAttempt.ListByEndpoint(b.ctx, "wm", f.ep.ID, &svix.MessageAttemptListOptions{WithMsg: &withMsg})
	if err != nil || len(l.Data) != 3 || l.Data[0].Msg == nil || l.Data[0].Msg.Id != l.Data[0].MsgId {
		t.Fatalf("SDK with_msg: %+v, %v", l, err)
	}
	if resp := b.do(t, "GET", path+"?with_msg=maybe", ""); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("with_msg=maybe: %d", resp.StatusCode)
	}
}

// An attempt that got no response shows, through the API, status 0 and why as its response.
func TestAttemptWithoutResponseShowsWhy(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "tr")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/hook"
	l.Close()
	ep, err := b.client.CreateEndpoint(b.ctx, "tr", &hookd.EndpointIn{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Send(b.ctx, "tr", &hookd.MessageIn{EventType: "a.b", Payload: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var got []svix.MessageAttemptOut
	mtEventually(t, "an attempt", func() bool {
		l, err := b.svix.MessageAttempt.ListByEndpoint(b.ctx, "tr", ep.ID, nil)
		got = l.Data
		return err == nil && len(l.Data) > 0
	})
	if a := got[len(got)-1]; a.ResponseStatusCode != 0 || a.Response != "connection refused" || a.Status != 2 {
		t.Fatalf("attempt %+v", a)
	}
}
