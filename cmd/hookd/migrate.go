package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/internal/migrations"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

const migrateUsage = `migrate [--db sqlite:PATH|postgres://...] [--status]

Applies hookd's migrations to the database, prints those it applied, and exits, so that a
deployment can migrate once before it starts its processes (serve migrates at start too; on
PostgreSQL processes that start at once migrate once, under a lock). A migration that a database
lacks is applied even when it is numbered below one it has. A database that this build must not
use is refused and left as it was: one a later release migrated, one another build migrated
(a migration's name or text differs), or one whose missing migration fails to apply.

--status applies nothing: it lists each migration, applied (with when), pending, or unknown to
this build, and exits 1 when hookd would refuse the database.`

// runMigrate handles "hookd migrate [--db ...] [--status]".
func runMigrate(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "migrate", migrateUsage)
	dbFlag := f.String("db", "", "the database, as serve's --db (env HOOKD_DB, or DATABASE_URL; default sqlite:hookd.db)")
	status := f.Bool("status", false, "list each migration's state and apply nothing; exit 1 when hookd would refuse the database")
	if err := f.parse(args); err != nil {
		return err
	}
	d, err := dbFlagTarget(*dbFlag)
	if err != nil {
		return usageErrorf(`run "hookd migrate --help"`, "migrate: %v", err)
	}
	if *status {
		return migrateStatus(ctx, e, d)
	}
	var applied []string
	if d.postgresURL != "" {
		applied, err = postgres.Migrate(ctx, d.postgresURL, nil)
	} else {
		applied, err = sqlite.Migrate(ctx, d.sqlitePath, nil)
	}
	if errors.Is(err, sqlite.ErrLocked) {
		return migrateBesideServe(ctx, e, d, err)
	}
	if err != nil {
		return failf(openFailureHint(d, err), "migrate: %v", err)
	}
	for _, name := range applied {
		fmt.Fprintf(e.stdout, "applied %s\n", name)
	}
	if len(applied) == 0 {
		fmt.Fprintf(e.stdout, "%s: schema up to date\n", d)
	} else {
		fmt.Fprintf(e.stdout, "%s: %d applied, schema up to date\n", d, len(applied))
	}
	return nil
}

// migrateBesideServe answers "hookd migrate" on a SQLite file that a running hookd serve holds
// (locked is Migrate's error): a file whose schema is this build's is up to date, which it says;
// any other is refused, since migrating a file under a running serve would change the schema
// that serve's statements were prepared for. serve applies the migrations at its own start.
func migrateBesideServe(ctx context.Context, e *env, d dbTarget, locked error) error {
	status, err := sqlite.SchemaStatus(ctx, d.sqlitePath)
	if err != nil {
		return failf(openFailureHint(d, locked), "migrate: %v", locked)
	}
	for _, s := range status {
		if s.State != migrations.Applied || s.Problem != nil {
			return failf("stop hookd serve, then run hookd migrate (or start the new hookd serve, which migrates at its start)",
				"migrate: %s: hookd serve has the file open, and migration %d (%s) is %s", d, s.Version, s.Name, s.State)
		}
	}
	fmt.Fprintf(e.stdout, "%s: schema up to date (hookd serve has the file open)\n", d)
	return nil
}

// migrateStatus prints the state of each migration of d, applying nothing, and fails when hookd
// would refuse the database.
func migrateStatus(ctx context.Context, e *env, d dbTarget) error {
	var status []migrations.Status
	var err error
	if d.postgresURL != "" {
		status, err = postgres.SchemaStatus(ctx, d.postgresURL, nil)
	} else {
		status, err = sqlite.SchemaStatus(ctx, d.sqlitePath)
	}
	if err != nil {
		hint := "check --db, and that PostgreSQL answers at that URL"
		if d.postgresURL == "" {
			hint = "check --db: the file must exist (hookd migrate creates it)"
		}
		return failf(hint, "migrate --status: %s: %v", d, err)
	}
	fmt.Fprintln(e.stdout, d)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAPPLIED")
	pending := 0
	var refusal error
	for _, s := range status {
		when := ""
		switch {
		case s.State == migrations.Pending && s.Missing:
			when = "(missing below an applied one)"
		case s.State != migrations.Pending:
			when = s.AppliedAt.UTC().Format(time.RFC3339)
			if s.Unchecked {
				when += " (before checksums)"
			}
		}
		if s.State == migrations.Pending {
			pending++
		}
		state := string(s.State)
		if s.Problem != nil {
			state += ", refused"
			if refusal == nil {
				refusal = s.Problem
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Version, s.Name, state, when)
	}
	if err := tw.Flush(); err != nil {
		return failf("", "migrate --status: %v", err)
	}
	switch {
	case refusal != nil:
		return failf(`the error names the migration and the fix`, "migrate --status: hookd refuses this database: %v", refusal)
	case pending > 0:
		fmt.Fprintf(e.stdout, "%d pending: \"hookd migrate\" (or the next start of hookd serve) applies them\n", pending)
	default:
		fmt.Fprintln(e.stdout, "schema up to date")
	}
	return nil
}

// openFailureHint says what to do when opening or migrating the database of d failed with err.
func openFailureHint(d dbTarget, err error) string {
	switch {
	case errors.Is(err, hookd.ErrIncompatibleSchema):
		return `the error names the migration and the fix; "hookd migrate --status" lists every migration`
	case errors.Is(err, sqlite.ErrLocked):
		return "stop the hookd that has the file open (hookd serve migrates at its start), or wait for it to stop"
	case d.postgresURL != "":
		return "check that PostgreSQL answers at that URL and that the user may create tables"
	}
	return "check that the directory exists and is writable, and that no other hookd uses the file"
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
