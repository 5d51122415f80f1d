package hookd

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// What the HTTP API (package server) keeps for a repeated Idempotency-Key. A response's body can
// hold a secret (app-portal-access answers with a token), so with Config.MainKey the body and the
// request's digest are stored sealed, with the response's key as additional data (secret_box.go).

// IdempotentResponse is a response the server replays for a repeated Idempotency-Key.
type IdempotentResponse struct {
	Key    string // the caller's key, scoped by the server (e.g. token hash + method + path + key)
	Status int
	Body   []byte
	// RequestHash is a digest of the request the response answered, to tell a retry of it from
	// another request under the same key; nil: none was stored, and the response replays for any
	// request under its key.
	RequestHash []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// IdempotentResponse returns the live response stored under key (see
// Store.GetIdempotentResponse), its body and request hash opened. A response stored before the
// main key was set reads as it is; a sealed one without the key, or with another, is ErrMainKey.
func (c *Client) IdempotentResponse(ctx context.Context, key string, now time.Time) (*IdempotentResponse, error) {
	r, err := c.store.GetIdempotentResponse(ctx, key, now)
	if err != nil {
		return nil, err
	}
	if r.Body, err = c.box.openBytes(replayAD(key, "body"), r.Body); err != nil {
		return nil, fmt.Errorf("hookd: idempotent response: %w", err)
	}
	if r.RequestHash, err = c.box.openBytes(replayAD(key, "request"), r.RequestHash); err != nil {
		return nil, fmt.Errorf("hookd: idempotent response: %w", err)
	}
	return r, nil
}

// PutIdempotentResponse stores r in a transaction of its own (see Tx.PutIdempotentResponse), its
// body and request hash sealed with Config.MainKey when it is set. r is not changed.
func (c *Client) PutIdempotentResponse(ctx context.Context, r *IdempotentResponse) error {
	stored := *r
	stored.Body = c.box.sealBytes(replayAD(r.Key, "body"), r.Body)
	stored.RequestHash = c.box.sealBytes(replayAD(r.Key, "request"), r.RequestHash)
	return c.store.InTx(ctx, func(tx Tx) error { return tx.PutIdempotentResponse(ctx, &stored) })
}

// replayAD is the additional data of a sealed part of the response stored under key.
func replayAD(key, part string) string {
	return "idempotency\x00" + key + "\x00" + part
}

// sealBytes is seal for bytes; nil stays nil.
func (b *secretBox) sealBytes(ad string, plain []byte) []byte {
	if b == nil || plain == nil {
		return plain
	}
	return []byte(b.seal(ad, string(plain)))
}

// openBytes is open for bytes; bytes not in sealed form (stored without a main key) are returned
// as they are.
func (b *secretBox) openBytes(ad string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, []byte(sealedPrefix)) {
		return stored, nil
	}
	plain, err := b.open(ad, string(stored))
	if err != nil {
		return nil, err
	}
	return []byte(plain), nil
}
