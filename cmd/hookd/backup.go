package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hookd/hookd/sqlite"
)

const backupUsage = `backup [--db sqlite:PATH] [--force] [--full-check] OUT

Writes a consistent copy of a SQLite database to the file OUT, while hookd serve runs on it or
not: every transaction committed when the copy begins, none after. The copy is checked (PRAGMA
quick_check, or integrity_check with --full-check), synced to disk, and only then named OUT.
It takes no lock a running serve needs and writes nothing to the database. To restore, stop
serve, put the copy in place of the database (removing its -wal and -shm files), and start serve.
For PostgreSQL it prints the pg_dump command to use instead. See docs/operations.md.`

// runBackup handles "hookd backup OUT".
func runBackup(ctx context.Context, e *env, args []string) error {
	f := newFlags(e, "backup", backupUsage)
	dbFlag := f.String("db", "", "the database, as serve's --db (env HOOKD_DB, or DATABASE_URL; default sqlite:hookd.db)")
	force := f.Bool("force", false, "replace OUT if it exists")
	full := f.Bool("full-check", false, "check the copy with PRAGMA integrity_check, which also compares every index with its table (about 3.5 times as long), rather than quick_check")
	pos, err := f.parseArgs(args, "OUT")
	if err != nil {
		return err
	}
	out := pos[0]
	d, err := dbFlagTarget(*dbFlag)
	if err != nil {
		return usageErrorf(`run "hookd backup --help"`, "backup: %v", err)
	}
	if d.postgresURL != "" {
		return usageErrorf("run: "+pgDumpCommand(d.postgresURL, out)+
			" (with the password in PGPASSWORD or ~/.pgpass; pg_restore reads the file back, see docs/operations.md)",
			"backup: hookd backup copies SQLite files; back up PostgreSQL with pg_dump")
	}
	if _, err := os.Stat(d.sqlitePath); err != nil {
		return failf("check --db: hookd serve creates the database at its first start", "backup: %s: %v", d, err)
	}
	res, err := sqlite.Backup(ctx, d.sqlitePath, out, &sqlite.BackupConfig{Overwrite: *force, FullCheck: *full})
	switch {
	case errors.Is(err, fs.ErrExist):
		return failf("name another file, or add --force to replace it", "backup: %s exists", out)
	case errors.Is(err, sqlite.ErrCorruptCopy):
		return failf("the database itself may be damaged: stop hookd serve, run PRAGMA integrity_check on it (sqlite3 "+
			d.sqlitePath+" 'PRAGMA integrity_check'), and restore the last good backup if it fails", "backup: %v", err)
	case err != nil:
		return failf("check that OUT's directory exists and is writable, with room for a copy of the database", "backup: %v", err)
	}
	check := "quick_check"
	if *full {
		check = "integrity_check"
	}
	fmt.Fprintf(e.stdout, "%s backed up to %s: %s in %s (copy %s, %s ok %s)\n", d, out, byteSize(res.Size),
		(res.Copy + res.Check).Round(time.Millisecond), res.Copy.Round(time.Millisecond), check, res.Check.Round(time.Millisecond))
	return nil
}

// pgDumpCommand is the pg_dump command line that backs up the database of dbURL to out, in
// pg_dump's custom format: dbURL without its password and without the parameters that pgx takes
// and libpq refuses (search_path becomes --schema, pool_* go).
func pgDumpCommand(dbURL, out string) string {
	args := []string{"pg_dump", "--format=custom", "--file=" + shellQuote(out)}
	u, err := url.Parse(dbURL)
	if err != nil {
		return strings.Join(append(args, "--dbname=URL"), " ")
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	if schema := q.Get("search_path"); schema != "" {
		q.Del("search_path")
		args = append(args, "--schema="+shellQuote(schema))
	}
	u.RawQuery = q.Encode()
	return strings.Join(append(args, "--dbname="+shellQuote(u.String())), " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but letters, digits and ./:_-@=,%+.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./:_-@=,%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// byteSize formats n bytes in B, KiB, MiB or GiB with one decimal.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 2 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMG"[i])
}
