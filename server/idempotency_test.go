package server

import (
	"io"
	"net/http"
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

// TestIdempotencyScope: a key is the caller's own; a client error is replayed too.
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

	// A 422 is stored: the same key with a fixed body gets the 422 again (use a new key).
	bad := idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":""}`, "Idempotency-Key", "bad"), http.StatusUnprocessableEntity)
	again := idemBody(t, b.do(t, "POST", "/api/v1/app", `{"name":"fixed"}`, "Idempotency-Key", "bad"), http.StatusUnprocessableEntity)
	if again != bad {
		t.Fatalf("replayed %s, want %s", again, bad)
	}
	// A key longer than 256 characters is refused.
	appReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"x"}`, "Idempotency-Key", strings.Repeat("k", 257)), http.StatusUnprocessableEntity)
	// GET ignores the header.
	appReadJSON(t, b.do(t, "GET", "/api/v1/app/a", "", key...), http.StatusOK)
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
