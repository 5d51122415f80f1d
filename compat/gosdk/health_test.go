package gosdk

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
	"github.com/hookd/hookd/sqlite"
)

// The SDK's Health.Get succeeds against hookd's report, workers part included; once the database
// is gone it returns an error with the status 503 (the SDK retries a 5xx first, then gives up).
func TestHealth(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := hookd.NewClient(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	auth, _, err := server.NewTokenAuth(ctx, store, adminToken, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(client, &server.Config{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	sdk, err := svix.New(adminToken, &svix.SvixOptions{ServerUrl: u, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		RetrySchedule: &[]time.Duration{10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sdk.Health.Get(ctx); err != nil {
		t.Fatalf("Health.Get with every part ok: %v", err)
	}

	if err := client.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// The last write probe's result stands for a second.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := sdk.Health.Get(ctx)
		if err != nil {
			if status(err) != http.StatusServiceUnavailable {
				t.Fatalf("Health.Get with the database closed: %v (status %d), want an error of status 503", err, status(err))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("Health.Get still succeeds 10 s after the database closed")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
