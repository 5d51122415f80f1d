package sqlite

import (
	"context"
	"database/sql"
	"testing"
)

// Every read connection stays open once idle: one closed is opened again by the next burst of
// reads, and reads the schema and compiles its statements again.
func TestReadersStayOpenWhenIdle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	// Hold every reader at once, then let them all go.
	for range 3 {
		var conns []interface{ Close() error }
		for range readConns {
			c, err := s.rdb.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := s.rdb.Stats()
	if st.MaxIdleClosed != 0 || st.Idle != readConns {
		t.Fatalf("after the readers went idle: %d closed for the idle limit, %d idle; want 0 closed and %d idle",
			st.MaxIdleClosed, st.Idle, readConns)
	}
}

// The writer and the readers keep temporary files, statement journals included, in memory.
func TestTempStoreInMemory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTestStore(t)
	for name, db := range map[string]interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}{"writer": s.db, "reader": s.rdb} {
		var mode int
		if err := db.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 { // MEMORY
			t.Errorf("%s: temp_store %d, want 2 (MEMORY)", name, mode)
		}
	}
}
