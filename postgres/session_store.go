package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlcodec"
	"github.com/hookd/hookd/internal/sqlstore"
)

// GetSession finds a browser session by hash; one that expired at or before now is
// hookd.ErrNotFound.
func (q *queries) GetSession(ctx context.Context, hash string, now time.Time) (*hookd.Session, error) {
	return sqlstore.Get(ctx, q.reader(), dialect.ScanSession, `SELECT hash, token_hash, app_id, created_at, expires_at FROM hookd_sessions
		WHERE hash = $1 AND expires_at > $2`,
		[]any{hash, now}, "get session")
}

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
