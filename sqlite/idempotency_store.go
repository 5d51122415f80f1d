package sqlite

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
)

// A stored response is live while now < expires_at.

// PutIdempotentResponse first deletes every response expired at r.CreatedAt (through the index on
// expires_at), an expired one under r.Key included, then inserts r: a live one under r.Key is
// hookd.ErrConflict. The body and the request hash are stored byte for byte; nil is NULL and
// reads back nil. Error messages never carry the key (the server scopes it by token hash).
func (t *txn) PutIdempotentResponse(ctx context.Context, r *hookd.IdempotentResponse) error {
	if _, err := t.q.ExecContext(ctx, `DELETE FROM hookd_idempotency WHERE expires_at <= ?`, micros(r.CreatedAt)); err != nil {
		return fmt.Errorf("put idempotent response: purge expired: %w", classify(err))
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO hookd_idempotency (key, status, body, request_hash, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, r.Key, r.Status, r.Body, r.RequestHash, micros(r.CreatedAt), micros(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("put idempotent response: %w", classify(err))
	}
	return nil
}
