package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// hotTables are the tables whose rows are updated or deleted as fast as messages are sent: the
// queue's jobs, the deliveries (each one's first job and status), the endpoints' slots, the bus's
// outbox. Without vacuum their dead rows pile up, and every claim reads through them (measured
// without autovacuum: 763 live and 1.2M dead rows in hookd_jobs, a claim up to 115 ms). Migration
// 19 gives them autovacuum settings of their own; docs/install.md says what they need.
var hotTables = []string{"hookd_jobs", "hookd_deliveries", "hookd_endpoint_slots", "hookd_events"}

// autovacuumState is what Open reads of the server's autovacuum.
type autovacuumState struct {
	// off: the server's autovacuum setting is off.
	off bool
	// noCounts: track_counts is off, without which autovacuum never starts.
	noCounts bool
	// disabled are the hot tables of the schema whose autovacuum_enabled is false.
	disabled []string
}

// readAutovacuum reads the server's autovacuum settings and the hot tables' own in the
// connection's current schema.
func readAutovacuum(ctx context.Context, q conn) (autovacuumState, error) {
	var st autovacuumState
	var on, counts string
	if err := q.queryRow(ctx, `SELECT current_setting('autovacuum'), current_setting('track_counts')`).Scan(&on, &counts); err != nil {
		return st, fmt.Errorf("read autovacuum: %w", err)
	}
	st.off, st.noCounts = !settingOn(on), !settingOn(counts)
	rows, err := q.query(ctx, `SELECT c.relname, opt FROM pg_class c
		CROSS JOIN LATERAL unnest(c.reloptions) AS opt
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1)
			AND opt LIKE 'autovacuum\_enabled=%'`, hotTables)
	if err != nil {
		return st, fmt.Errorf("read autovacuum of the tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, opt string
		if err := rows.Scan(&table, &opt); err != nil {
			return st, fmt.Errorf("read autovacuum of the tables: %w", err)
		}
		if !settingOn(strings.TrimPrefix(opt, "autovacuum_enabled=")) {
			st.disabled = append(st.disabled, table)
		}
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("read autovacuum of the tables: %w", err)
	}
	slices.Sort(st.disabled)
	return st, nil
}

// settingOn reads a boolean setting as PostgreSQL does (on, true, yes, 1 and their prefixes).
func settingOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t", "y", "tr", "tru", "ye":
		return true
	}
	return false
}

// warning is the one line Open logs when autovacuum cannot keep the hot tables, and what to do;
// empty when it can.
func (st autovacuumState) warning() string {
	var what []string
	if st.off {
		what = append(what, "the server's autovacuum is off")
	}
	if st.noCounts {
		what = append(what, "track_counts is off, so autovacuum never starts")
	}
	if len(st.disabled) > 0 {
		what = append(what, "autovacuum_enabled is false on "+strings.Join(st.disabled, ", "))
	}
	if len(what) == 0 {
		return ""
	}
	return "postgres: " + strings.Join(what, "; ") + ": the queue's tables (" + strings.Join(hotTables, ", ") +
		") fill with dead rows and every claim of a job reads through them, slower by the hour. " +
		"Turn autovacuum on (autovacuum = on and track_counts = on in postgresql.conf, then SELECT pg_reload_conf(); " +
		"ALTER TABLE <table> RESET (autovacuum_enabled) for a table), or run VACUUM (ANALYZE) on these tables " +
		"every few minutes; see docs/install.md"
}

// warnAutovacuum logs warning() once, at Open; a failure to read the settings is logged at debug
// level and Open goes on (a role may be refused pg_settings).
func (s *Store) warnAutovacuum(ctx context.Context) {
	st, err := readAutovacuum(ctx, s.queries.c)
	if err != nil {
		s.logger.Debug("postgres: could not check autovacuum", "err", err)
		return
	}
	if w := st.warning(); w != "" {
		s.logger.Warn(w)
	}
}
