package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hookd/hookd"
)

// Token prefixes. Only the admin token's is part of the contract (the binary prints it); both
// help a person tell a leaked token's kind at a glance.
const (
	adminTokenPrefix = "hookd_sk_"
	appTokenPrefix   = "hookd_app_"
)

// adminMarker is the key of the row that says which admin token is current. The store finds
// tokens by hash only and cannot list them, so the admin token is told by its creation time: an
// admin row (AppID empty) counts only while its CreatedAt equals the marker's. Setting a new admin
// token writes both with a new time, strictly later than the marker's, which retires the previous
// admin row at once (it stays in the table, unusable). No token hashes to the marker's key (a
// SHA-256 hex digest has no ':'), so no token authenticates as it.
const adminMarker = "hookd:admin-token"

// TokenAuth is the Authenticator over the hookd store: tokens are kept as the hex SHA-256 of
// the token, never in clear. One admin token speaks for the operator; app-portal tokens, minted by
// POST /api/v1/auth/app-portal-access/{app_id}, speak for one application until they expire or
// log out.
type TokenAuth struct {
	store hookd.Store
	now   func() time.Time

	// cache holds tokens recently found valid, by hash, so that a request does not wait for the
	// database (on SQLite its one connection, shared with the workers) to authenticate. A token
	// revoked here leaves the cache at once; one revoked by another process, within tokenCacheTTL.
	mu    sync.Mutex
	cache map[string]cachedToken
}

type cachedToken struct {
	p     Principal
	until time.Time
}

// Bounds of TokenAuth's cache.
const (
	tokenCacheTTL = 2 * time.Second
	tokenCacheMax = 10_000
)

var (
	_ Authenticator = (*TokenAuth)(nil)
	_ TokenIssuer   = (*TokenAuth)(nil)
)

// TokenIssuer is what an Authenticator also implements when the server may mint app-portal
// tokens (app-portal-access, dashboard-access) and revoke them (logout). Without it those routes
// answer 501.
type TokenIssuer interface {
	// IssueToken mints an app-portal token that authenticates as p (p.AppID set), valid for ttl.
	IssueToken(ctx context.Context, p Principal, ttl time.Duration) (string, error)
	// Revoke makes token unusable at once; an unknown token is hookd.ErrNotFound.
	Revoke(ctx context.Context, token string) error
}

// NewTokenAuth returns the store's authenticator and makes sure an admin token exists.
//
// With adminToken set, its hash becomes the admin token, and any previous admin token stops
// working. With it empty, the admin token already in the store is kept; if there is none, a new
// one ("hookd_sk_" + 32 random bytes, base64url) is stored and returned as generated, for the
// caller to show once: only its hash is kept. now nil means time.Now.
func NewTokenAuth(ctx context.Context, store hookd.Store, adminToken string, now func() time.Time) (*TokenAuth, string, error) {
	if store == nil {
		return nil, "", errors.New("server: NewTokenAuth needs a store")
	}
	if now == nil {
		now = time.Now
	}
	a := &TokenAuth{store: store, now: now}
	if adminToken != "" {
		if err := a.setAdmin(ctx, hashToken(adminToken)); err != nil {
			return nil, "", err
		}
		return a, "", nil
	}
	_, err := store.GetToken(ctx, adminMarker, a.now())
	if err == nil {
		return a, "", nil // keep the admin token the store has
	}
	if !errors.Is(err, hookd.ErrNotFound) {
		return nil, "", fmt.Errorf("server: look up the admin token: %w", err)
	}
	generated, err := newToken(adminTokenPrefix)
	if err != nil {
		return nil, "", err
	}
	if err := a.setAdmin(ctx, hashToken(generated)); err != nil {
		return nil, "", err
	}
	return a, generated, nil
}

// setAdmin makes hash the admin token's, in one transaction: the marker and the admin row get the
// same new time (whole microseconds, as the store keeps them), later than the previous marker's.
func (a *TokenAuth) setAdmin(ctx context.Context, hash string) error {
	at := a.now().UTC().Truncate(time.Microsecond)
	err := a.store.InTx(ctx, func(tx hookd.Tx) error {
		marker, err := tx.GetToken(ctx, adminMarker, at)
		switch {
		case err == nil:
			if cur, err := tx.GetToken(ctx, hash, at); err == nil && cur.AppID == "" && cur.CreatedAt.Equal(marker.CreatedAt) {
				return nil // already the admin token
			}
			if !at.After(marker.CreatedAt) {
				at = marker.CreatedAt.Add(time.Microsecond)
			}
			if err := tx.DeleteToken(ctx, adminMarker); err != nil {
				return err
			}
		case !errors.Is(err, hookd.ErrNotFound):
			return err
		}
		// A row under this hash (a retired admin row of the same token) is replaced.
		if err := tx.DeleteToken(ctx, hash); err != nil && !errors.Is(err, hookd.ErrNotFound) {
			return err
		}
		if err := tx.InsertToken(ctx, &hookd.Token{Hash: hash, CreatedAt: at}); err != nil {
			return err
		}
		return tx.InsertToken(ctx, &hookd.Token{Hash: adminMarker, CreatedAt: at})
	})
	if err != nil {
		return fmt.Errorf("server: store the admin token: %w", err)
	}
	return nil
}

// Authenticate finds the token by hash: the current admin token is Principal{}, an app-portal
// token the Principal it was issued for (AppID, ReadOnly, FeatureFlags). A missing, unknown,
// expired, revoked or retired token is errUnauthorized.
func (a *TokenAuth) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, errUnauthorized
	}
	now := a.now()
	hash := hashToken(token)
	if p, ok := a.cached(hash, now); ok {
		return p, nil
	}
	p, until, err := a.lookup(ctx, hash, now)
	if err != nil {
		return Principal{}, err
	}
	a.remember(hash, p, until)
	return p, nil
}

func (a *TokenAuth) cached(hash string, now time.Time) (Principal, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.cache[hash]
	if !ok || !now.Before(c.until) {
		return Principal{}, false
	}
	return c.p, true
}

func (a *TokenAuth) remember(hash string, p Principal, until time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cache == nil || len(a.cache) >= tokenCacheMax {
		a.cache = make(map[string]cachedToken)
	}
	a.cache[hash] = cachedToken{p: p, until: until}
}

// appForgetter is what an Authenticator with a cache implements so that the tokens of a deleted
// application stop working at once.
type appForgetter interface{ ForgetApp(appID string) }

// ForgetApp drops the cached tokens of an application (deleted, with its tokens).
func (a *TokenAuth) ForgetApp(appID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, c := range a.cache {
		if c.p.AppID == appID {
			delete(a.cache, h)
		}
	}
}

func (a *TokenAuth) forget(hash string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.cache, hash)
}

// lookup authenticates a token hash against the store, and returns until when the answer may be
// cached.
func (a *TokenAuth) lookup(ctx context.Context, hash string, now time.Time) (Principal, time.Time, error) {
	until := now.Add(tokenCacheTTL)
	t, err := a.store.GetToken(ctx, hash, now)
	if errors.Is(err, hookd.ErrNotFound) {
		return Principal{}, until, errUnauthorized
	}
	if err != nil {
		return Principal{}, until, fmt.Errorf("server: authenticate: %w", err)
	}
	if t.ExpiresAt != nil && t.ExpiresAt.Before(until) {
		until = *t.ExpiresAt
	}
	if t.AppID != "" {
		return Principal{AppID: t.AppID, ReadOnly: t.ReadOnly, FeatureFlags: t.FeatureFlags}, until, nil
	}
	marker, err := a.store.GetToken(ctx, adminMarker, now)
	if errors.Is(err, hookd.ErrNotFound) {
		return Principal{}, until, errUnauthorized
	}
	if err != nil {
		return Principal{}, until, fmt.Errorf("server: authenticate: %w", err)
	}
	if !t.CreatedAt.Equal(marker.CreatedAt) {
		return Principal{}, until, errUnauthorized // a previous admin token
	}
	return Principal{}, until, nil
}

// IssueAppToken mints an app-portal token for the application with id appID, valid for ttl, that
// may write and holds no feature flags.
func (a *TokenAuth) IssueAppToken(ctx context.Context, appID string, ttl time.Duration) (string, error) {
	return a.IssueToken(ctx, Principal{AppID: appID}, ttl)
}

// IssueToken mints an app-portal token that authenticates as p, valid for ttl. p.AppID is
// required: the admin token is set by NewTokenAuth only.
func (a *TokenAuth) IssueToken(ctx context.Context, p Principal, ttl time.Duration) (string, error) {
	if p.AppID == "" {
		return "", errors.New("server: an app-portal token needs an application id")
	}
	token, err := newToken(appTokenPrefix)
	if err != nil {
		return "", err
	}
	now := a.now().UTC()
	expires := now.Add(ttl)
	err = a.store.InTx(ctx, func(tx hookd.Tx) error {
		return tx.InsertToken(ctx, &hookd.Token{Hash: hashToken(token), AppID: p.AppID, CreatedAt: now, ExpiresAt: &expires,
			ReadOnly: p.ReadOnly, FeatureFlags: slices.Clone(p.FeatureFlags)})
	})
	if err != nil {
		return "", fmt.Errorf("server: store an app-portal token: %w", err)
	}
	return token, nil
}

// Revoke deletes the token; an unknown one is hookd.ErrNotFound.
func (a *TokenAuth) Revoke(ctx context.Context, token string) error {
	a.forget(hashToken(token))
	err := a.store.InTx(ctx, func(tx hookd.Tx) error { return tx.DeleteToken(ctx, hashToken(token)) })
	if err != nil {
		return fmt.Errorf("server: revoke a token: %w", err)
	}
	return nil
}

// hashToken is the hex SHA-256 of a token, the only form the store keeps.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newToken returns prefix + 32 random bytes in unpadded base64url.
func newToken(prefix string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("server: random token: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}
