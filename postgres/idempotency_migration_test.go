package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookd/hookd/postgres"
)

// TestIdempotencyDigestMigration: migration 7 keeps the responses an earlier schema stored, which
// read back with no request hash.
func TestIdempotencyDigestMigration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	// Back to the schema before migration 7, with a response stored by it.
	pool := b.store.Pool()
	for _, q := range undoFrom(7) {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO hookd_idempotency (key, status, body, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		"older", 201, []byte(`{"id":"app_1"}`), now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(context.Background(), b.url, &postgres.Config{Schema: b.schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.GetIdempotentResponse(ctx, "older", now)
	if err != nil || got.Status != 201 || string(got.Body) != `{"id":"app_1"}` || got.RequestHash != nil {
		t.Fatalf("older response after migration: %+v, %v", got, err)
	}
}
