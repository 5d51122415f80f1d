package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for counts and sizes
	_ "modernc.org/sqlite"             // database/sql's "sqlite" driver, for counts

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/sqlite"
)

// scaleDB is the database a fill or a measure works on: a SQLite file or a PostgreSQL database
// (with a schema).
type scaleDB struct {
	sqlitePath string
	pgURL      string // with search_path set to schema when schema is given
	schema     string
}

var scaleSchemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// parseScaleDB reads --db and --schema.
func parseScaleDB(db, schema string) (*scaleDB, error) {
	switch {
	case db == "":
		return nil, usageErrorf("", "--db is required: sqlite:PATH or postgres://USER@HOST:PORT/DATABASE")
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		if _, err := pgx.ParseConfig(db); err != nil {
			return nil, usageErrorf("", "--db %s: %v", redact.URL(db), err)
		}
		d := &scaleDB{pgURL: db, schema: schema}
		if schema != "" {
			if !scaleSchemaName.MatchString(schema) {
				return nil, usageErrorf("", "--schema %q: letters, digits and '_', not starting with a digit, at most 63", schema)
			}
			u, _ := url.Parse(db)
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			d.pgURL = u.String()
		}
		return d, nil
	case schema != "":
		return nil, usageErrorf("", "--schema is for PostgreSQL")
	}
	path := strings.TrimPrefix(db, "sqlite:")
	if path == "" {
		return nil, usageErrorf("", "--db sqlite: needs a path")
	}
	return &scaleDB{sqlitePath: path}, nil
}

func (d *scaleDB) String() string {
	if d.pgURL != "" {
		return redact.URL(d.pgURL)
	}
	return "sqlite:" + d.sqlitePath
}

// serveDB is the --db a hookd serve child gets: the URL, with the schema as its search_path.
func (d *scaleDB) serveDB() string {
	if d.pgURL != "" {
		return d.pgURL
	}
	return "sqlite:" + d.sqlitePath
}

// create creates the PostgreSQL database when it does not exist, and the schema when given.
func (d *scaleDB) create(ctx context.Context) error {
	if d.pgURL == "" {
		return nil
	}
	conn, err := connectDB(ctx, d.pgURL)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "3D000" { // invalid_catalog_name: no such database
		cfg, perr := pgx.ParseConfig(d.pgURL)
		if perr != nil {
			return perr
		}
		name := cfg.Database
		cfg.Database = "postgres"
		cfg.RuntimeParams = nil
		admin, aerr := pgx.ConnectConfig(ctx, cfg)
		if aerr != nil {
			return failf("", "connect to create database %s: %v", name, aerr)
		}
		_, cerr := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		admin.Close(ctx)
		if cerr != nil {
			return failf("", "create database %s: %v", name, cerr)
		}
		conn, err = connectDB(ctx, d.pgURL)
	}
	if err != nil {
		return failf("", "connect to %s: %v", d, err)
	}
	defer conn.Close(ctx)
	if d.schema != "" {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{d.schema}.Sanitize()); err != nil {
			return failf("", "create schema %s: %v", d.schema, err)
		}
	}
	return nil
}

// openStore opens the store, applying the migrations.
func (d *scaleDB) openStore(ctx context.Context, logger *slog.Logger) (hookd.Store, error) {
	if d.pgURL != "" {
		return postgres.Open(ctx, d.pgURL, &postgres.Config{Logger: logger, Schema: d.schema})
	}
	return sqlite.Open(ctx, d.sqlitePath, &sqlite.Config{Logger: logger})
}

// scaleQuerier runs the fill's and the measure's own statements: counts, sizes, and the ids
// and times the measure's requests name.
type scaleQuerier struct {
	db       *sql.DB
	postgres bool
}

func (d *scaleDB) query(ctx context.Context) (*scaleQuerier, error) {
	var (
		db  *sql.DB
		err error
	)
	if d.pgURL != "" {
		db, err = sql.Open("pgx", d.pgURL)
	} else {
		db, err = sql.Open("sqlite", "file:"+d.sqlitePath+"?mode=ro&_pragma=busy_timeout(10000)")
	}
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return &scaleQuerier{db: db, postgres: d.pgURL != ""}, nil
}

func (q *scaleQuerier) close() { q.db.Close() }

func (q *scaleQuerier) count(ctx context.Context, stmt string, args ...any) (int64, error) {
	var n int64
	err := q.db.QueryRowContext(ctx, stmt, args...).Scan(&n)
	return n, err
}

// text returns the one text column of stmt's first row.
func (q *scaleQuerier) text(ctx context.Context, stmt string, args ...any) (string, error) {
	var s string
	err := q.db.QueryRowContext(ctx, stmt, args...).Scan(&s)
	return s, err
}

// at returns the time of a created_at column read by stmt: microseconds on SQLite, timestamptz
// on PostgreSQL.
func (q *scaleQuerier) at(ctx context.Context, stmt string, args ...any) (time.Time, error) {
	if q.postgres {
		var t time.Time
		err := q.db.QueryRowContext(ctx, stmt, args...).Scan(&t)
		return t.UTC(), err
	}
	var us int64
	err := q.db.QueryRowContext(ctx, stmt, args...).Scan(&us)
	return time.UnixMicro(us).UTC(), err
}

// ScaleCounts are what a database holds.
type ScaleCounts struct {
	Applications      int64     `json:"applications"`
	Endpoints         int64     `json:"endpoints"`
	Messages          int64     `json:"messages"`
	LargestApp        int64     `json:"largestApplication"` // messages of the largest application
	Deliveries        int64     `json:"deliveries"`
	FailedDeliveries  int64     `json:"failedDeliveries"`
	PendingDeliveries int64     `json:"pendingDeliveries"`
	Attempts          int64     `json:"attempts"`
	FailedAttempts    int64     `json:"failedAttempts"`
	OnChannels        int64     `json:"onChannels"` // messages on a channel
	Tagged            int64     `json:"tagged"`     // messages with a tag
	First             time.Time `json:"first"`      // the oldest message's creation time
	Last              time.Time `json:"last"`
}

func (q *scaleQuerier) counts(ctx context.Context) (ScaleCounts, error) {
	var c ScaleCounts
	for _, s := range []struct {
		n    *int64
		stmt string
	}{
		{&c.Applications, "SELECT count(*) FROM hookd_applications"},
		{&c.Endpoints, "SELECT count(*) FROM hookd_endpoints"},
		{&c.Messages, "SELECT count(*) FROM hookd_messages"},
		{&c.LargestApp, "SELECT count(*) FROM hookd_messages WHERE app_id = (SELECT id FROM hookd_applications WHERE uid = 'scale-000')"},
		{&c.Deliveries, "SELECT count(*) FROM hookd_deliveries"},
		{&c.FailedDeliveries, "SELECT count(*) FROM hookd_deliveries WHERE status = 'failed'"},
		{&c.PendingDeliveries, "SELECT count(*) FROM hookd_deliveries WHERE status = 'pending'"},
		{&c.Attempts, "SELECT count(*) FROM hookd_attempts"},
		{&c.FailedAttempts, "SELECT count(*) FROM hookd_attempts WHERE NOT success"},
		{&c.OnChannels, "SELECT count(DISTINCT message_id) FROM hookd_message_channels"},
		{&c.Tagged, "SELECT count(DISTINCT message_id) FROM hookd_message_tags"},
	} {
		n, err := q.count(ctx, s.stmt)
		if err != nil {
			return c, fmt.Errorf("%s: %w", s.stmt, err)
		}
		*s.n = n
	}
	if c.Messages > 0 {
		var err error
		if c.First, err = q.at(ctx, "SELECT min(created_at) FROM hookd_messages"); err != nil {
			return c, err
		}
		if c.Last, err = q.at(ctx, "SELECT max(created_at) FROM hookd_messages"); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ScaleSize is the database's size on disk.
type ScaleSize struct {
	Total int64 `json:"total"`
	// SQLite: the file and its write-ahead log.
	File int64 `json:"file,omitempty"`
	WAL  int64 `json:"wal,omitempty"`
	// PostgreSQL: pg_database_size, and pg_total_relation_size (with indexes and TOAST) of each
	// table of the schema, largest first.
	Database int64        `json:"database,omitempty"`
	Tables   []TableBytes `json:"tables,omitempty"`
}

// TableBytes is one table's size.
type TableBytes struct {
	Table string `json:"table"`
	Bytes int64  `json:"bytes"`
}

func (d *scaleDB) size(ctx context.Context, q *scaleQuerier) (ScaleSize, error) {
	var s ScaleSize
	if d.pgURL == "" {
		fi, err := os.Stat(d.sqlitePath)
		if err != nil {
			return s, err
		}
		s.File = fi.Size()
		if wi, err := os.Stat(d.sqlitePath + "-wal"); err == nil {
			s.WAL = wi.Size()
		}
		s.Total = s.File + s.WAL
		return s, nil
	}
	if err := q.db.QueryRowContext(ctx, "SELECT pg_database_size(current_database())").Scan(&s.Database); err != nil {
		return s, err
	}
	rows, err := q.db.QueryContext(ctx, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 2 DESC, 1`)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var t TableBytes
		if err := rows.Scan(&t.Table, &t.Bytes); err != nil {
			return s, err
		}
		s.Tables = append(s.Tables, t)
		s.Total += t.Bytes
	}
	return s, rows.Err()
}

func (s ScaleSize) text() string {
	if s.Database == 0 {
		return fmt.Sprintf("%s (file %s, WAL %s)", mib(s.Total), mib(s.File), mib(s.WAL))
	}
	var parts []string
	for _, t := range s.Tables {
		if t.Bytes >= 1<<20 {
			parts = append(parts, t.Table+" "+mib(t.Bytes))
		}
	}
	return fmt.Sprintf("%s in hookd's tables (%s); database %s", mib(s.Total), strings.Join(parts, ", "), mib(s.Database))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
