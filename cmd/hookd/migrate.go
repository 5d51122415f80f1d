package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/postgres"
)

// runMigrate handles "hookd migrate [--db ...]": it brings the database's schema up to date and
// exits, so that a deployment can migrate once before it starts its processes (serve migrates
// at start too; on PostgreSQL concurrent starts migrate once, under a lock).
func runMigrate(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "migrate", "migrate [--db sqlite:PATH|postgres://...]\n\nApplies hookd's migrations to the database and exits.")
	dbFlag := f.String("db", "", "the database, as serve's --db (env HOOKD_DB, or DATABASE_URL; default sqlite:hookd.db)")
	if err := f.parse(args); err != nil {
		return err
	}
	d, err := dbFlagTarget(*dbFlag)
	if err != nil {
		return usageErrorf(`run "hookd migrate --help"`, "migrate: %v", err)
	}
	if d.postgresURL != "" {
		if _, err := postgres.Migrate(ctx, d.postgresURL, nil); err != nil {
			return failf("check that PostgreSQL answers at that URL and that the user may create tables", "migrate: %v", err)
		}
	} else {
		store, err := openDB(ctx, d, nil)
		if err != nil {
			return failf("check that the directory exists and is writable, and that no other hookd uses the file", "migrate: %v", err)
		}
		if err := store.Close(); err != nil {
			return failf("", "migrate: %v", err)
		}
	}
	fmt.Fprintf(e.stdout, "%s: schema up to date\n", d)
	return nil
}

// dbFlagTarget is the database a --db flag of v names, or else HOOKD_DB, or else DATABASE_URL,
// or else sqlite:hookd.db.
func dbFlagTarget(v string) (dbTarget, error) {
	for _, name := range []string{"HOOKD_DB", "DATABASE_URL"} {
		if v == "" {
			v = os.Getenv(name)
		}
	}
	if v == "" {
		v = "sqlite:hookd.db"
	}
	d, err := parseDBTarget(v)
	if err != nil {
		return d, fmt.Errorf("--db %q: %w", redact.URL(v), err)
	}
	return d, nil
}
