package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookd/hookd"
)

// DefaultSessionTTL is how long a browser stays signed in to the dashboard or the portal: a
// working day. A portal session ends sooner when its link's token expires.
const DefaultSessionTTL = 12 * time.Hour

// sessionPrefix starts a session id, so that a leaked cookie value is told from a token.
const sessionPrefix = "hookd_ses_"

// StartSession signs a browser in with token: it stores a new session of the token's principal,
// valid for ttl or until the token expires, whichever is first, and returns the session's id for
// the browser's cookie (only its hash is stored). A token that does not authenticate is
// errUnauthorized.
func (a *TokenAuth) StartSession(ctx context.Context, token string, ttl time.Duration) (string, Principal, error) {
	p, err := a.Authenticate(ctx, token)
	if err != nil {
		return "", Principal{}, err
	}
	now := a.now().UTC().Truncate(time.Microsecond)
	t, err := a.store.GetToken(ctx, hashToken(token), now)
	if errors.Is(err, hookd.ErrNotFound) {
		return "", Principal{}, errUnauthorized
	}
	if err != nil {
		return "", Principal{}, fmt.Errorf("server: start a session: %w", err)
	}
	expires := now.Add(ttl)
	if t.ExpiresAt != nil && t.ExpiresAt.Before(expires) {
		expires = *t.ExpiresAt
	}
	id, err := newToken(sessionPrefix)
	if err != nil {
		return "", Principal{}, err
	}
	s := &hookd.Session{Hash: hashToken(id), TokenHash: t.Hash, AppID: p.AppID, CreatedAt: now, ExpiresAt: expires}
	if err := a.store.InTx(ctx, func(tx hookd.Tx) error { return tx.InsertSession(ctx, s) }); err != nil {
		return "", Principal{}, fmt.Errorf("server: start a session: %w", err)
	}
	return id, p, nil
}

// Session returns the principal of the browser session with id id. A missing, unknown, expired or
// ended session is errUnauthorized, and so is one whose token no longer works (revoked, expired,
// a replaced admin token, an application deleted).
func (a *TokenAuth) Session(ctx context.Context, id string) (Principal, error) {
	if id == "" {
		return Principal{}, errUnauthorized
	}
	now := a.now()
	s, err := a.store.GetSession(ctx, hashToken(id), now)
	if errors.Is(err, hookd.ErrNotFound) {
		return Principal{}, errUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("server: read a session: %w", err)
	}
	p, ok := a.cached(s.TokenHash, now)
	if !ok {
		var until time.Time
		if p, until, err = a.lookup(ctx, s.TokenHash, now); err != nil {
			return Principal{}, err
		}
		a.remember(s.TokenHash, p, until)
	}
	if p.AppID != s.AppID {
		return Principal{}, errUnauthorized
	}
	return p, nil
}

// EndSession ends the browser session with id id at once; with revokeToken, a portal session's
// token is revoked too, which ends every other session opened with it and the link it came in.
// The admin token is never revoked. An unknown or expired session is already ended: nil.
func (a *TokenAuth) EndSession(ctx context.Context, id string, revokeToken bool) error {
	if id == "" {
		return nil
	}
	hash := hashToken(id)
	s, err := a.store.GetSession(ctx, hash, a.now())
	if errors.Is(err, hookd.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: end a session: %w", err)
	}
	revoke := revokeToken && s.AppID != ""
	if revoke {
		a.forget(s.TokenHash)
	}
	err = a.store.InTx(ctx, func(tx hookd.Tx) error {
		if err := tx.DeleteSession(ctx, hash); err != nil && !errors.Is(err, hookd.ErrNotFound) {
			return err
		}
		if !revoke {
			return nil
		}
		if err := tx.DeleteToken(ctx, s.TokenHash); err != nil && !errors.Is(err, hookd.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("server: end a session: %w", err)
	}
	return nil
}
