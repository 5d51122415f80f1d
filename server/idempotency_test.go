package server

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
)

// idemBody reads resp's body and checks its status.
func idemBody(t *testing.T, resp *http.Response, status int) string {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	return string(body)
}

func idemCountApps(t *testing.T, b *bundle) int {
	t.Helper()
	page, err := b.client.ListApplications(b.ctx, hookd.ListOptions{Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Data)
}

func TestIdempotencyReplay(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	key := []string{"Idempotency-Key", "create-acme-1"}
	first := b.do(t, "POST", "/api/v1/app", `{"name":"Acme"}`, key...)
	firstBody := idemBody(t, first, http.StatusCreated)
	if first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatal("first response marked replayed")
	}
	second := b.do(t, "POST", "/api/v1/app", `{"name":"Acme"}`, key...)
	if body := idemBody(t, second, http.StatusCreated); body != firstBody {
		t.Fatalf("replay %s, want %s", body, firstBody)
	}
	if second.Header.Get("Idempotent-Replayed") != "true" || second.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("replay headers %v", second.Header)
	}
	if n := idemCountApps(t, b); n != 1 {
		t.Fatalf("%d applications, want 1", n)
	}
	// Another key, another application.
	idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":"Acme"}`, "Idempotency-Key", "create-acme-2"), http.StatusCreated)
	// The same key on another route is another request.
	idemBody(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"a.b","description":"d"}`, key...), http.StatusCreated)
	// Without the header, nothing is replayed.
	idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":"Acme"}`), http.StatusCreated)
	if n := idemCountApps(t, b); n != 3 {
		t.Fatalf("%d applications, want 3", n)
	}

	// Through the SDK.
	opts := &svix.PostOptions{IdempotencyKey: svix.String("sdk-key")}
	a1, err := b.svix.Application.CreateWithOptions(b.ctx, &svix.ApplicationIn{Name: "SDK"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := b.svix.Application.CreateWithOptions(b.ctx, &svix.ApplicationIn{Name: "SDK"}, opts)
	if err != nil || a2.Id != a1.Id {
		t.Fatalf("SDK replay: %+v, %v; want id %s", a2, err, a1.Id)
	}
	if n := idemCountApps(t, b); n != 4 {
		t.Fatalf("%d applications, want 4", n)
	}
}

// TestIdempotencyScope: a key is the caller's own; only a success is kept, as in Svix's server.
func TestIdempotencyScope(t *testing.T) {
	t.Parallel()
	tokens := map[string]string{}
	b := setup(t, staticAuth{apps: tokens})
	app := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"A","uid":"a"}`), http.StatusCreated)
	tokens["portal"] = app["id"].(string)
	key := []string{"Idempotency-Key", "k"}
	// The portal token's 403 under key k does not answer the admin's request under k.
	idemBody(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"x","description":"d"}`, append(key, "Authorization", "Bearer portal")...), http.StatusForbidden)
	idemBody(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"x","description":"d"}`, key...), http.StatusCreated)

	// A 422 is not kept: the same key with the body fixed runs, and its success is kept.
	idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":""}`, "Idempotency-Key", "bad"), http.StatusUnprocessableEntity)
	fixed := idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":"fixed"}`, "Idempotency-Key", "bad"), http.StatusCreated)
	again := b.do(t, "POST", "/api/v1/app", `{"name":"fixed"}`, "Idempotency-Key", "bad")
	if body := idemBody(t, again, http.StatusCreated); body != fixed || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replayed %s (%v), want %s", body, again.Header, fixed)
	}
	// A key longer than 256 characters is refused.
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"x"}`, "Idempotency-Key", strings.Repeat("k", 257)), http.StatusUnprocessableEntity)
	// GET ignores the header.
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/a", "", key...), http.StatusOK)
}

// TestIdempotencyTokensApart: two tokens sending the same key and the same request each get their
// own response.
func TestIdempotencyTokensApart(t *testing.T) {
	t.Parallel()
	tokens := map[string]string{}
	b := setup(t, staticAuth{apps: tokens})
	app := appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"A","uid":"a"}`), http.StatusCreated)
	tokens["portal-one"], tokens["portal-two"] = app["id"].(string), app["id"].(string)
	const msg = `{"eventType":"invoice.paid","payload":{"n":1}}`
	ids := map[string]bool{}
	for _, token := range []string{"portal-one", "portal-two", testToken} {
		resp := b.do(t, "POST", "/api/v1/app/a/msg", msg, "Idempotency-Key", "shared", "Authorization", "Bearer "+token)
		out := appReadJSON(t, resp, http.StatusAccepted)
		if resp.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("token %s got another token's response %v", token, out)
		}
		ids[out["id"].(string)] = true
	}
	if len(ids) != 3 {
		t.Fatalf("message ids %v: want one message per token", ids)
	}
}

// TestIdempotencyKeyReused: the same key with another body is a 422 naming the key, and sends
// nothing; on another path, or with another query, it is another request.
func TestIdempotencyKeyReused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	key := []string{"Idempotency-Key", "order-1001"}
	first := idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":"Acme","uid":"acme"}`, key...), http.StatusCreated)

	resp := b.do(t, "POST", "/api/v1/app", `{"name":"Other","uid":"other"}`, key...)
	body := idemBody(t, resp, http.StatusUnprocessableEntity)
	var out struct {
		Detail []struct {
			Loc []string `json:"loc"`
			Msg string   `json:"msg"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Detail) != 1 || !slices.Equal(out.Detail[0].Loc, []string{"header", "idempotency-key"}) ||
		!strings.Contains(out.Detail[0].Msg, "'order-1001'") || resp.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("reused key: %v %s", resp.Header, body)
	}
	if n := idemCountApps(t, b); n != 1 {
		t.Fatalf("%d applications, want 1: the second body was not to be sent", n)
	}
	// The first body again is still a replay.
	resp = b.do(t, "POST", "/api/v1/app", `{"name":"Acme","uid":"acme"}`, key...)
	if got := idemBody(t, resp, http.StatusCreated); got != first || resp.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %s %v, want %s", got, resp.Header, first)
	}
	// Another query is another request (Svix scopes by the whole URI): get_if_exists answers 200
	// with the application, not the first 201.
	resp = b.do(t, "POST", "/api/v1/app?get_if_exists=true", `{"name":"Acme","uid":"acme"}`, key...)
	if idemBody(t, resp, http.StatusOK); resp.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("another query replayed: %v", resp.Header)
	}
	// Another path is another request, whatever its body.
	idemBody(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"a.b","description":"d"}`, key...), http.StatusCreated)
	if n := idemCountApps(t, b); n != 1 {
		t.Fatalf("%d applications, want 1", n)
	}
}

// TestIdempotencyConcurrent: duplicates sent at once run once.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const n = 8
	bodies := make([]string, n)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(b.ctx, "POST", b.srv.URL+"/api/v1/app", strings.NewReader(`{"name":"Once"}`))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Idempotency-Key", "concurrent")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			bodies[i], statuses[i] = string(body), resp.StatusCode
		})
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusCreated || bodies[i] != bodies[0] {
			t.Fatalf("response %d: %d %s; first %s", i, statuses[i], bodies[i], bodies[0])
		}
	}
	if c := idemCountApps(t, b); c != 1 {
		t.Fatalf("%d applications, want 1", c)
	}
}
