package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/procmem"
)

// cpuTime is the CPU time the process has used, user and system (Linux only: elsewhere the test
// skips).
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	d, err := procmem.CPU(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	return d
}

// distinctNames returns n distinct event type names of three characters.
func distinctNames(n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	out := make([]string, n)
	for i := range out {
		out[i] = string([]byte{alphabet[i/(62*62)%62], alphabet[i/62%62], alphabet[i%62]})
	}
	return out
}

// wantRefused checks that resp is Svix's 422 naming field in where (body, query).
func wantRefused(t *testing.T, resp *http.Response, where, field string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422; body %.300s", resp.StatusCode, body)
	}
	var v struct {
		Detail []struct {
			Loc []string `json:"loc"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Detail) == 0 {
		t.Fatalf("422 body %.300s: %v", body, err)
	}
	if loc := v.Detail[0].Loc; len(loc) != 2 || loc[0] != where || loc[1] != field {
		t.Fatalf("loc %v, want [%s %s]", loc, where, field)
	}
}

// TestLongNameListsAreCheap sends 180,000 distinct names (about 1 MB) to every list of names a
// request may carry: each is refused, naming the list, within a second of the process's CPU time
// (a linear search per name, to drop repeats, makes reading such a list quadratic). It does not
// run in parallel, so the CPU time is this test's.
func TestLongNameListsAreCheap(t *testing.T) {
	b := setup(t, nil)
	epTestApp(t, b, "acme")
	ep := epReadJSON(t, b.do(t, "POST", "/api/v1/app/acme/endpoint", `{"url":"`+b.recv.URL("/")+`","uid":"e1"}`), http.StatusCreated)
	epID := ep["id"].(string)

	names := distinctNames(180_000)
	query := "?event_types=" + strings.Join(names, ",")
	list, _ := json.Marshal(names)
	cases := []struct {
		name, method, path, body, where, field string
	}{
		{"messages", "GET", "/api/v1/app/acme/msg" + query, "", "query", "event_types"},
		{"attempts of an endpoint", "GET", "/api/v1/app/acme/attempt/endpoint/" + epID + query, "", "query", "event_types"},
		{"messages of an endpoint", "GET", "/api/v1/app/acme/endpoint/" + epID + "/msg" + query, "", "query", "event_types"},
		{"endpoint filterTypes", "POST", "/api/v1/app/acme/endpoint", `{"url":"` + b.recv.URL("/") + `","filterTypes":` + string(list) + `}`, "body", "filterTypes"},
		{"endpoint channels", "PATCH", "/api/v1/app/acme/endpoint/" + epID, `{"channels":` + string(list) + `}`, "body", "channels"},
		{"event type featureFlags", "POST", "/api/v1/event-type", `{"name":"big","description":"d","featureFlags":` + string(list) + `}`, "body", "featureFlags"},
		{"message channels", "POST", "/api/v1/app/acme/msg", `{"eventType":"a","payload":{},"channels":` + string(list) + `}`, "body", "channels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := cpuTime(t)
			resp := b.do(t, c.method, c.path, c.body)
			used := cpuTime(t) - start
			wantRefused(t, resp, c.where, c.field)
			if used > time.Second {
				t.Errorf("the request used %v of CPU, want under 1s", used)
			}
		})
	}
}

// TestManyEventTypesFilter lists messages by more event types than SQLite takes terms in a
// compound SELECT (500), and refuses more than maxNameList.
func TestManyEventTypesFilter(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "acme")
	m, err := b.client.Send(b.ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	names := append(distinctNames(maxNameList-1), "invoice.paid")
	resp := b.do(t, "GET", "/api/v1/app/acme/msg?event_types="+url.QueryEscape(strings.Join(names, ",")), "")
	got := appReadJSON(t, resp, http.StatusOK)
	data, _ := got["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != m.Message.ID {
		t.Fatalf("listed %v, want only %s", data, m.Message.ID)
	}
	names = append(names, "one.more")
	resp = b.do(t, "GET", "/api/v1/app/acme/msg?event_types="+url.QueryEscape(strings.Join(names, ",")), "")
	wantRefused(t, resp, "query", "event_types")
}
