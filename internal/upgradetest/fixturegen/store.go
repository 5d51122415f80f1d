package main

import (
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hookd/hookd/internal/upgradetest"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" driver, to checkpoint the file the build left
)

// database is the fixture's database while the build writes it.
type database struct {
	store   string
	flag    string // the --db the build gets
	path    string // SQLite: the file
	baseURL string // PostgreSQL: where the database was created
	name    string // PostgreSQL: the database's name
}

// newDatabase makes the fixture's empty database: a file in dir, or a PostgreSQL database of its own.
func newDatabase(ctx context.Context, o *options, dir string) (*database, error) {
	d := &database{store: o.store}
	if o.store == upgradetest.StoreSQLite {
		d.path = filepath.Join(dir, "hookd.db")
		d.flag = "sqlite:" + d.path
		return d, nil
	}
	d.baseURL = o.postgresURL
	d.name = fmt.Sprintf("hookd_fixture_%d_%d", o.number, time.Now().UnixNano())
	c, err := pgx.Connect(ctx, d.baseURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(d.baseURL), err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+d.name); err != nil {
		return nil, fmt.Errorf("create database %s: %w", d.name, err)
	}
	u, err := url.Parse(d.baseURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + d.name
	d.flag = u.String()
	return d, nil
}

// keep writes the database into the fixture's directory: the SQLite file with its WAL
// checkpointed into it (a server killed with SIGKILL leaves a WAL), or a pg_dump; gzipped.
func (d *database) keep(ctx context.Context, o *options) error {
	if d.store == upgradetest.StoreSQLite {
		db, err := sql.Open("sqlite", d.path)
		if err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", d.path, err)
		}
		f, err := os.Open(d.path)
		if err != nil {
			return err
		}
		defer f.Close()
		return writeGzip(filepath.Join(o.out, upgradetest.SQLiteFile), f)
	}
	cmd := exec.CommandContext(ctx, o.pgDump, "--no-owner", "--no-privileges", "--inserts", "--dbname", d.flag)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pg_dump: %w", err)
	}
	werr := writeGzip(filepath.Join(o.out, upgradetest.DumpFile), out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("pg_dump: %w", err)
	}
	return werr
}

// drop removes the PostgreSQL database; the SQLite file goes with the work directory.
func (d *database) drop(ctx context.Context) {
	if d.store == upgradetest.StoreSQLite {
		return
	}
	c, err := pgx.Connect(ctx, d.baseURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fixturegen: drop database %s: %v\n", d.name, err)
		return
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)"); err != nil {
		fmt.Fprintf(os.Stderr, "fixturegen: drop database %s: %v\n", d.name, err)
	}
}

// writeGzip writes r to path, gzipped, with no name or time in its header (the same input gives
// the same bytes).
func writeGzip(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	if _, err := io.Copy(zw, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// redact drops a URL's password.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}
