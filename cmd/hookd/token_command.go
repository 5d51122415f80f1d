package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd/server"
)

// adminTokenPrefix starts every admin token, as serve's generated one.
const adminTokenPrefix = "hookd_sk_"

// runToken handles "hookd token rotate": a new admin token for a database serve has already set
// up, whether or not serve runs on it (on SQLite, a running serve's file is opened beside it). The
// new token is printed once on stdout and only its hash is stored; the previous admin token stops
// working (within a few seconds in a serve that runs, which caches tokens briefly).
func runToken(ctx context.Context, e *env, args []string) error {
	const usage = "token rotate [--db sqlite:PATH|postgres://...]\n\nMints a new admin token, prints it once on stdout and revokes the previous one."
	if len(args) == 0 || args[0] != "rotate" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(e.stdout, "Usage: hookd %s\n", usage)
			return nil
		}
		return usageErrorf(`run "hookd token rotate --help"`, "token: the subcommand is rotate")
	}
	f := newFlags(e, "token rotate", usage)
	dbFlag := f.String("db", "", "the database, as serve's --db (env HOOKD_DB, or DATABASE_URL; default sqlite:hookd.db)")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	d, err := dbFlagTarget(*dbFlag)
	if err != nil {
		return usageErrorf(`run "hookd token rotate --help"`, "token rotate: %v", err)
	}
	notSetUp := `check --db, or run "hookd migrate" (or "hookd serve") on it first`
	if err := checkMigrated(ctx, d); err != nil {
		return failf(notSetUp, "token rotate: %s: %v", d, err)
	}
	store, err := openMaintenanceDB(ctx, d)
	if err != nil {
		hint := besideHint(err)
		if hint == "" {
			hint = "check that the SQLite file is writable, or that PostgreSQL answers"
		}
		return failf(hint, "token rotate: open the database: %v", err)
	}
	token, err := newAdminToken()
	if err != nil {
		_ = store.Close()
		return failf("", "token rotate: %v", err)
	}
	if _, _, err := server.NewTokenAuth(ctx, store, token, time.Now); err != nil {
		_ = store.Close()
		return failf("", "token rotate: %v", err)
	}
	if err := store.Close(); err != nil {
		return failf("", "token rotate: %v", err)
	}
	fmt.Fprintln(e.stdout, token)
	return nil
}

// newAdminToken returns adminTokenPrefix and 32 random bytes, base64url.
func newAdminToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return adminTokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// errNotMigrated says that a database exists but holds no hookd schema.
var errNotMigrated = errors.New("no hookd schema in this database")

// checkMigrated says whether d exists and holds hookd's tokens table, without creating or
// migrating anything: a mistyped --db must not become a new, empty database.
func checkMigrated(ctx context.Context, d dbTarget) error {
	if d.postgresURL != "" {
		conn, err := pgx.Connect(ctx, d.postgresURL)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		var found bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('hookd_tokens') IS NOT NULL`).Scan(&found); err != nil {
			return fmt.Errorf("look for hookd's schema: %w", err)
		}
		if !found {
			return errNotMigrated
		}
		return nil
	}
	if _, err := os.Stat(d.sqlitePath); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	db, err := sql.Open("sqlite", "file:"+d.sqlitePath+"?mode=ro")
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'hookd_tokens'`).Scan(&n); err != nil {
		return fmt.Errorf("look for hookd's schema: %w", err)
	}
	if n == 0 {
		return errNotMigrated
	}
	return nil
}
