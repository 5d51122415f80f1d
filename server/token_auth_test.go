package server

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// tokenStore opens a fresh SQLite store.
func tokenStore(t *testing.T) (context.Context, *sqlite.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hookd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return ctx, store
}

func mustPrincipal(t *testing.T, a *TokenAuth, token string, want Principal) {
	t.Helper()
	p, err := a.Authenticate(context.Background(), token)
	if err != nil || !reflect.DeepEqual(p, want) {
		t.Fatalf("Authenticate(%.12s...): %+v, %v; want %+v", token, p, err, want)
	}
}

func mustRefuse(t *testing.T, a *TokenAuth, token string) {
	t.Helper()
	if _, err := a.Authenticate(context.Background(), token); !errors.Is(err, errUnauthorized) {
		t.Fatalf("Authenticate(%.12s...): %v, want errUnauthorized", token, err)
	}
}

func TestTokenAuthAdminToken(t *testing.T) {
	t.Parallel()
	ctx, store := tokenStore(t)

	// None in the store: one is generated, shown once, kept by hash.
	a, generated, err := NewTokenAuth(ctx, store, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(generated, "hookd_sk_") || len(generated) != len("hookd_sk_")+43 {
		t.Fatalf("generated %q", generated)
	}
	mustPrincipal(t, a, generated, Principal{})
	if _, err := store.GetToken(ctx, hashToken(generated), time.Now()); err != nil {
		t.Fatalf("stored by hash: %v", err)
	}
	if _, err := store.GetToken(ctx, generated, time.Now()); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("stored in clear: %v", err)
	}
	mustRefuse(t, a, "")
	mustRefuse(t, a, adminMarker)

	// One in the store: kept, nothing generated.
	a, again, err := NewTokenAuth(ctx, store, "", nil)
	if err != nil || again != "" {
		t.Fatalf("second start: %q, %v", again, err)
	}
	mustPrincipal(t, a, generated, Principal{})

	// Configured: it replaces the previous one.
	a, again, err = NewTokenAuth(ctx, store, "configured-secret", nil)
	if err != nil || again != "" {
		t.Fatalf("configured: %q, %v", again, err)
	}
	mustPrincipal(t, a, "configured-secret", Principal{})
	mustRefuse(t, a, generated)

	// The same configured token again, then none configured: it stays.
	if a, _, err = NewTokenAuth(ctx, store, "configured-secret", nil); err != nil {
		t.Fatal(err)
	}
	mustPrincipal(t, a, "configured-secret", Principal{})
	a, again, err = NewTokenAuth(ctx, store, "", nil)
	if err != nil || again != "" {
		t.Fatalf("after configured: %q, %v", again, err)
	}
	mustPrincipal(t, a, "configured-secret", Principal{})

	// Another configured token replaces it.
	if a, _, err = NewTokenAuth(ctx, store, "rotated", nil); err != nil {
		t.Fatal(err)
	}
	mustPrincipal(t, a, "rotated", Principal{})
	mustRefuse(t, a, "configured-secret")

	// A clock that stands still (or went back) still retires the previous token.
	frozen := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, tok := range []string{"first", "second", "first"} {
		if a, _, err = NewTokenAuth(ctx, store, tok, frozen); err != nil {
			t.Fatal(err)
		}
	}
	mustPrincipal(t, a, "first", Principal{})
	mustRefuse(t, a, "second")
	mustRefuse(t, a, "rotated")
}

func TestTokenAuthAppTokens(t *testing.T) {
	t.Parallel()
	ctx, store := tokenStore(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a, _, err := NewTokenAuth(ctx, store, "admin", clock)
	if err != nil {
		t.Fatal(err)
	}
	err = store.InTx(ctx, func(tx hookd.Tx) error {
		for _, id := range []string{"app_1", "app_2"} {
			if err := tx.InsertApplication(ctx, &hookd.Application{ID: id, Name: id, CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.IssueAppToken(ctx, "app_missing", time.Hour); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("token for a missing application: %v, want ErrNotFound", err)
	}
	tok, err := a.IssueAppToken(ctx, "app_1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := a.IssueAppToken(ctx, "app_2", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if tok == other || !strings.HasPrefix(tok, "hookd_app_") {
		t.Fatalf("tokens %q, %q", tok, other)
	}
	mustPrincipal(t, a, tok, Principal{AppID: "app_1"})
	mustPrincipal(t, a, other, Principal{AppID: "app_2"})

	// A read-only token with feature flags is that from the cache and from the store.
	limited := Principal{AppID: "app_1", ReadOnly: true, FeatureFlags: []string{"beta", "gamma"}}
	ltok, err := a.IssueToken(ctx, limited, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mustPrincipal(t, a, ltok, limited)
	mustPrincipal(t, a, ltok, limited)
	fresh, _, err := NewTokenAuth(ctx, store, "", a.now)
	if err != nil {
		t.Fatal(err)
	}
	mustPrincipal(t, fresh, ltok, limited)

	// Expiry.
	mu.Lock()
	now = now.Add(61 * time.Minute)
	mu.Unlock()
	mustRefuse(t, a, tok)
	mustPrincipal(t, a, other, Principal{AppID: "app_2"})

	// Revoke.
	if err := a.Revoke(ctx, other); err != nil {
		t.Fatal(err)
	}
	mustRefuse(t, a, other)
	if err := a.Revoke(ctx, other); !errors.Is(err, hookd.ErrNotFound) {
		t.Fatalf("revoke twice: %v, want ErrNotFound", err)
	}
	mustPrincipal(t, a, "admin", Principal{})
	if _, err := a.IssueAppToken(ctx, "", time.Hour); err == nil {
		t.Fatal("a token for no application")
	}
}
