// Command fixturegen makes one upgrade fixture: it runs an earlier build's own "hookd serve" on a
// fresh database, drives it through its HTTP API into the scenario below, stops it, and keeps the
// database (an SQLite file, or a PostgreSQL dump) with a manifest of what the build answered.
// scripts/upgrade-fixture.sh builds the binary of a commit and runs it; testdata/upgrade/README.md
// says when.
//
// The scenario, as far as the build supports it (what it lacks is skipped and listed in the
// manifest's "skipped"):
//
//   - event types; applications with uids and metadata; an app-portal token; the admin token;
//   - endpoints with uids, metadata, custom headers, event-type filters, channels, a rate limit,
//     retry policies, a secret rotated once, and an ordered endpoint;
//   - messages with event ids, channels and tags, whose deliveries end delivered (the receiver
//     answers 200), failed (every try of a short schedule answered 500), pending after a failed
//     first attempt, pending never attempted (the server killed with SIGKILL while its attempts
//     hang, and on PostgreSQL messages accepted by an API-only server), and parked behind the
//     failed head of an ordered endpoint.
//
// Every endpoint URL points to the fixture's own receiver address (upgradetest.ReceiverAddr),
// where this program's receiver plays each endpoint's role while the build runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hookd/hookd/internal/upgradetest"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fixturegen:", err)
		os.Exit(1)
	}
}

// options are fixturegen's flags.
type options struct {
	hookd       string // the earlier build's binary
	store       string
	out         string // the fixture's directory, made anew
	number      int    // the fixture's number among its store's: its receiver address
	state       string
	built       string
	postgresURL string // a database the generator may create databases on
	pgDump      string
}

func run(ctx context.Context, args []string) error {
	o := &options{}
	f := flag.NewFlagSet("fixturegen", flag.ContinueOnError)
	f.StringVar(&o.hookd, "hookd", "", "the `BINARY` of the build that writes the fixture")
	f.StringVar(&o.store, "store", "", "sqlite or postgres")
	f.StringVar(&o.out, "out", "", "the fixture's `DIR` (testdata/upgrade/STORE/NAME), replaced")
	f.IntVar(&o.number, "number", 0, "the fixture's `N` among its store's: its receiver listens on 127.27.S.N:2727")
	f.StringVar(&o.state, "state", "", "the `COMMIT` whose migrations the database has")
	f.StringVar(&o.built, "built", "", "the `COMMIT` the binary was built from")
	f.StringVar(&o.postgresURL, "postgres-url", os.Getenv("HOOKD_TEST_POSTGRES_URL"), "PostgreSQL `URL` to create the fixture's database on (env HOOKD_TEST_POSTGRES_URL)")
	f.StringVar(&o.pgDump, "pg-dump", "pg_dump", "the pg_dump `BINARY`")
	if err := f.Parse(args); err != nil {
		return err
	}
	switch {
	case o.hookd == "" || o.out == "" || o.state == "" || o.built == "":
		return errors.New("--hookd, --out, --state and --built are required")
	case o.store == upgradetest.StorePostgres && o.postgresURL == "":
		return errors.New("--store postgres needs --postgres-url or HOOKD_TEST_POSTGRES_URL")
	}
	addr, err := upgradetest.ReceiverAddr(o.store, o.number)
	if err != nil {
		return err
	}
	g, err := newGenerator(ctx, o, addr)
	if err != nil {
		return err
	}
	defer g.close()
	start := time.Now()
	if err := g.generate(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fixturegen: %s written in %s\n", o.out, time.Since(start).Round(time.Second))
	return nil
}
