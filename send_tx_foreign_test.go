package hookd_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// TestSendTxForeignTx: SendTx on the SQLite store with a transaction of another database is
// hookd.ErrUnsupportedTx saying to begin it on the store's DB(), and writes nothing; one already
// committed is sql.ErrTxDone; one of DB() sends.
func TestSendTxForeignTx(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	msg := &hookd.MessageIn{EventType: "a.b", Payload: map[string]int{"n": 1}}

	other, err := sqlite.Open(b.ctx, filepath.Join(t.TempDir(), "other.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	sameFile, err := sql.Open("sqlite", b.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sameFile.Close() })
	dbs := map[string]*sql.DB{"another SQLite file": other.DB(), "another *sql.DB on the file": sameFile}
	if u := os.Getenv("HOOKD_TEST_POSTGRES_URL"); u != "" {
		pg, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		dbs["PostgreSQL"] = pg
	} else {
		t.Log("HOOKD_TEST_POSTGRES_URL is unset: the PostgreSQL transaction is not tried")
	}
	for name, db := range dbs {
		tx, err := db.BeginTx(b.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.client.SendTx(b.ctx, tx, "acme", msg)
		if !errors.Is(err, hookd.ErrUnsupportedTx) || !strings.Contains(err.Error(), "DB()") {
			t.Errorf("%s: %v, want hookd.ErrUnsupportedTx naming DB()", name, err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}

	tx, err := b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.SendTx(b.ctx, tx, "acme", msg); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("a committed transaction: %v, want sql.ErrTxDone", err)
	}

	tx, err = b.store.DB().BeginTx(b.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.SendTx(b.ctx, tx, "acme", msg); err != nil {
		t.Fatalf("a transaction of DB(): %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	page, err := b.client.ListMessages(b.ctx, "acme", hookd.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 {
		t.Fatalf("%d messages, want the one sent in DB()'s transaction", len(page.Data))
	}
}
