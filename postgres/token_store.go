package postgres

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// InsertToken stores a server token. A hash taken is hookd.ErrConflict; a missing application,
// hookd.ErrNotFound. Error messages never carry the hash.
func (t *txn) InsertToken(ctx context.Context, tok *hookd.Token) error {
	flags, err := sqlcodec.EncodeStrings(tok.FeatureFlags)
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	_, err = t.c.exec(ctx, `INSERT INTO hookd_tokens (hash, app_id, created_at, expires_at, read_only, feature_flags)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		tok.Hash, sqlcodec.NullString(tok.AppID), tok.CreatedAt, nullTime(tok.ExpiresAt), tok.ReadOnly, flags)
	if err != nil {
		return fmt.Errorf("insert token: %w", classify(err))
	}
	return nil
}

// DeleteToken removes a server token; a missing one is hookd.ErrNotFound.
func (t *txn) DeleteToken(ctx context.Context, hash string) error {
	if err := mustAffect(t.c.exec(ctx, `DELETE FROM hookd_tokens WHERE hash = $1`, hash)); err != nil {
		return fmt.Errorf("delete token: %w", err)
	}
	return nil
}
