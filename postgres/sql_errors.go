package postgres

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// PostgreSQL error codes (SQLSTATE) that classify maps.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
)

// classify maps driver errors to hookd's sentinels, keeping the original in the chain: no row is
// hookd.ErrNotFound, a unique or primary key taken is hookd.ErrConflict, and a foreign key that
// points nowhere (an endpoint of a missing application) is hookd.ErrNotFound. The server's
// message names the constraint, never the key's value (a token's hash stays out of errors).
func classify(err error) error {
	if err == nil || errors.Is(err, hookd.ErrUnavailable) {
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", hookd.ErrUnavailable, err)
	}
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows) {
		return hookd.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return fmt.Errorf("%w: %w", hookd.ErrConflict, err)
		case codeForeignKeyViolation:
			return fmt.Errorf("%w: %w", hookd.ErrNotFound, err)
		}
	}
	return err
}

// conflictOf returns err, when it says that a unique key of an entity (an application, an
// endpoint) is taken, as a *hookd.ConflictError (sqlstore.Conflict); any other error as it is.
func conflictOf(err error, entity, id, uid string) error {
	return sqlstore.Conflict(err, conflictColumns(err), entity, id, uid)
}

// conflictColumns returns the columns of the unique key that err says is taken, read from the
// server's detail ("Key (app_id, uid)=(...) already exists.", whose values are not kept), or nil
// when err says no such thing.
func conflictColumns(err error) []string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != codeUniqueViolation {
		return nil
	}
	rest, ok := strings.CutPrefix(pe.Detail, "Key (")
	if !ok {
		return nil
	}
	list, _, ok := strings.Cut(rest, ")=")
	if !ok {
		return nil
	}
	var cols []string
	for col := range strings.SplitSeq(list, ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(col), `"`))
	}
	return cols
}

// unavailable marks err as hookd.ErrUnavailable when it says the database could not be reached
// and is not marked yet, and returns any other error as it is. Every statement of the store's
// conn passes its error here (conn.go); InTx passes its function's too, for what ran outside the
// conn: a caller's own statements on Raw, River's inserts.
func unavailable(err error) error {
	if err == nil || errors.Is(err, hookd.ErrUnavailable) || !unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", hookd.ErrUnavailable, err)
}

// unreachable reports whether err says the database could not be reached or cannot take the work
// now: a failed connect, a lost connection, a network error, the server shutting down or refusing
// connections (SQLSTATE classes 08 and 57P), out of a resource (class 53: a full disk, memory,
// connections) or failing to read or write its files (58030). Each passes once the server, its
// disk or its load is mended, so the API answers 503 and the queue tries again.
func unreachable(err error) bool {
	var (
		ce *pgconn.ConnectError
		ne net.Error
		pe *pgconn.PgError
	)
	switch {
	case errors.As(err, &pe):
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") ||
			strings.HasPrefix(pe.Code, "53") || pe.Code == "58030"
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "conn busy")
}

// mustAffect returns hookd.ErrNotFound when an UPDATE or DELETE touched no row.
func mustAffect(n int64, err error) error {
	if err != nil {
		return classify(err)
	}
	if n == 0 {
		return hookd.ErrNotFound
	}
	return nil
}
