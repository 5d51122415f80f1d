package sqlite

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
	if _, err := t.q.ExecContext(ctx, `DELETE FROM hookd_sessions WHERE expires_at <= ?`, micros(s.CreatedAt)); err != nil {
		return fmt.Errorf("insert session: purge expired: %w", classify(err))
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO hookd_sessions (hash, token_hash, app_id, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`,
		s.Hash, s.TokenHash, sqlcodec.NullString(s.AppID), micros(s.CreatedAt), micros(s.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", classify(err))
	}
	return nil
}

// DeleteSession removes a browser session; a missing one is hookd.ErrNotFound.
func (t *txn) DeleteSession(ctx context.Context, hash string) error {
	if err := mustAffect(t.q.ExecContext(ctx, `DELETE FROM hookd_sessions WHERE hash = ?`, hash)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}
