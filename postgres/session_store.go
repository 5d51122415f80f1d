package postgres

import (
	"context"
	"fmt"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
)

// InsertSession first deletes every session expired at s.CreatedAt (through the index on
// expires_at), then inserts s. A hash taken is hookd.ErrConflict; a missing application,
// hookd.ErrNotFound. Error messages never carry the hashes.
func (t *txn) InsertSession(ctx context.Context, s *hookd.Session) error {
	if _, err := t.c.exec(ctx, `DELETE FROM hookd_sessions WHERE expires_at <= $1`, s.CreatedAt); err != nil {
		return fmt.Errorf("insert session: purge expired: %w", classify(err))
	}
	_, err := t.c.exec(ctx, `INSERT INTO hookd_sessions (hash, token_hash, app_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5)`,
		s.Hash, s.TokenHash, sqlcodec.NullString(s.AppID), s.CreatedAt, s.ExpiresAt)
	if err != nil {
		return fmt.Errorf("insert session: %w", classify(err))
	}
	return nil
}

// DeleteSession removes a browser session; a missing one is hookd.ErrNotFound.
func (t *txn) DeleteSession(ctx context.Context, hash string) error {
	if err := mustAffect(t.c.exec(ctx, `DELETE FROM hookd_sessions WHERE hash = $1`, hash)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
