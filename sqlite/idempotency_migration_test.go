package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestIdempotencyDigestMigration: migration 9 keeps the responses an earlier schema stored, which
// read back with no request hash.
func TestIdempotencyDigestMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "hookd.db")
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema before migration 9, with a response stored by it.
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, q := range undoFrom(9) {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO hookd_idempotency (key, status, body, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		"older", 201, []byte(`{"id":"app_1"}`), now.UnixMicro(), now.Add(time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	got, err := s.GetIdempotentResponse(ctx, "older", now)
	if err != nil || got.Status != 201 || string(got.Body) != `{"id":"app_1"}` || got.RequestHash != nil {
		t.Fatalf("older response after migration: %+v, %v", got, err)
	}
	err = s.InTx(ctx, func(tx hookd.Tx) error {
		return tx.PutIdempotentResponse(ctx, &hookd.IdempotentResponse{Key: "newer", Status: 200, RequestHash: []byte{1, 2}, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
}
