package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/cmd/hookd/internal/redact"
	"github.com/hookd/hookd/postgres"
	"github.com/hookd/hookd/redisqueue"
	"github.com/hookd/hookd/sqlite"
	"github.com/redis/go-redis/v9"
)

// This file opens what --db and --queue name: the store (SQLite or PostgreSQL) and, with
// --queue, the Redis queue in front of it.

// dbTarget is a parsed --db.
type dbTarget struct {
	sqlitePath  string // set for SQLite
	postgresURL string // set for PostgreSQL
}

func (d dbTarget) String() string {
	if d.postgresURL != "" {
		return redact.URL(d.postgresURL)
	}
	return "sqlite:" + d.sqlitePath
}

// openDB opens the database of d, applying its migrations.
func openDB(ctx context.Context, d dbTarget, logger *slog.Logger) (hookd.Store, error) {
	if d.postgresURL != "" {
		return postgres.Open(ctx, d.postgresURL, &postgres.Config{Logger: logger})
	}
	return sqlite.Open(ctx, d.sqlitePath, &sqlite.Config{Logger: logger})
}

// openMaintenanceDB opens the database of d for a command that maintains it (token, events): as
// openDB, but a SQLite file that a running hookd serve holds is opened beside it
// (sqlite.Config.Beside), which needs the file's schema to be this build's, and neither migrates
// it nor runs its queue.
func openMaintenanceDB(ctx context.Context, d dbTarget) (hookd.Store, error) {
	if d.postgresURL != "" {
		return postgres.Open(ctx, d.postgresURL, nil)
	}
	return sqlite.Open(ctx, d.sqlitePath, &sqlite.Config{Beside: true})
}

// besideHint says what to do about err from openMaintenanceDB when a running hookd serve holds
// the SQLite file and its schema is not this build's; "" for any other error.
func besideHint(err error) string {
	var se *sqlite.SchemaError
	switch {
	case !errors.As(err, &se):
		return ""
	case len(se.Unknown) > 0:
		return "this hookd is older than the hookd serve that holds the file: run the release serve runs (hookd version)"
	}
	return "stop hookd serve first (serve applies migrations at start), or run the release that serve runs (hookd version)"
}

// openQueue returns the Redis queue of cfg.queueURL in front of store, or nil for the store's
// own. An empty cfg.queueNamespace derives one from the database, so that installations on
// different databases never share tasks on one Redis. The sweeper runs every half of
// cfg.sweepAfter, at most every 30 s (redisqueue's default SweepInterval). It does not contact
// Redis: the client's Start does. Close it after the client stops.
func openQueue(cfg *serveConfig, store hookd.Store, jobTimeout time.Duration, logger *slog.Logger) (*redisqueue.Queue, error) {
	if cfg.queueURL == "" {
		return nil, nil
	}
	namespace := cfg.queueNamespace
	if namespace == "" {
		namespace = defaultNamespace(cfg.db)
	}
	q, err := redisqueue.New(cfg.queueURL, store, &hookd.QueueConfig{Workers: cfg.workers, JobTimeout: jobTimeout},
		&redisqueue.Config{Logger: logger, Namespace: namespace, SweepAfter: cfg.sweepAfter})
	if err != nil {
		return nil, err
	}
	// go-redis's own lines (a failed dial each) go through the queue's outage log, not stderr.
	redis.SetLogger(q.ClientLogger())
	return q, nil
}

// defaultNamespace names an installation by its database: "hookd-" and 12 hex digits of a
// hash of the database's absolute path, or of its PostgreSQL host, port, database and options
// (its user and password left out).
func defaultNamespace(d dbTarget) string {
	id := d.sqlitePath
	if abs, err := filepath.Abs(id); err == nil {
		id = abs
	}
	if d.postgresURL != "" {
		id = d.postgresURL
		if u, err := url.Parse(d.postgresURL); err == nil {
			u.User = nil
			id = u.String()
		}
	}
	sum := sha256.Sum256([]byte(id))
	return "hookd-" + hex.EncodeToString(sum[:6])
}

func parseDB(c *serveConfig, v string) error {
	d, err := parseDBTarget(v)
	if err != nil {
		return err
	}
	c.db = d
	return nil
}

func parseDBTarget(v string) (dbTarget, error) {
	lower := strings.ToLower(v)
	path := v
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		if _, err := url.Parse(v); err != nil {
			return dbTarget{}, errors.New("not a URL; use postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable")
		}
		return dbTarget{postgresURL: v}, nil
	case strings.HasPrefix(lower, "sqlite:"):
		path = strings.TrimPrefix(v[len("sqlite:"):], "//") // sqlite://rel.db, sqlite:///abs/path.db
	case strings.Contains(v, "://"):
		return dbTarget{}, errors.New("use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE")
	}
	if strings.TrimSpace(path) == "" {
		return dbTarget{}, errors.New("the path is empty; use sqlite:PATH, e.g. sqlite:/var/lib/hookd/hookd.db")
	}
	return dbTarget{sqlitePath: path}, nil
}

func parseQueue(c *serveConfig, v string) error {
	if v == "" {
		c.queueURL = ""
		return nil
	}
	u, err := url.Parse(v)
	ok := err == nil
	if ok {
		switch u.Scheme {
		case "redis", "rediss":
			ok = u.Host != ""
		case "unix":
		default:
			ok = false
		}
	}
	if !ok {
		return errors.New("use redis://[USER:PASSWORD@]HOST:PORT[/DB], rediss:// for TLS or unix:///PATH, or leave it unset for the database's own queue")
	}
	c.queueURL = v
	return nil
}

func parseSweepAfter(c *serveConfig, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return errors.New("use a duration of at least 1s, e.g. 1m or 30s")
	}
	c.sweepAfter = d
	return nil
}

func parseNamespace(c *serveConfig, v string) error {
	if len(v) > 64 || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 {
		return errors.New("use at most 64 letters, digits, '-', '_' or '.'")
	}
	c.queueNamespace = v
	return nil
}

// Roles of a serve process.
const (
	roleAll    = "all"
	roleAPI    = "api"
	roleWorker = "worker"
)

func parseRole(c *serveConfig, v string) error {
	switch v {
	case roleAll, roleAPI, roleWorker:
		c.role = v
		return nil
	}
	return fmt.Errorf("use %s (the API and the workers), %s (the API only) or %s (the workers only)", roleAll, roleAPI, roleWorker)
}
