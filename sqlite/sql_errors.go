package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// classify maps driver errors to hookd's sentinels, keeping the original in the chain: no row is
// hookd.ErrNotFound, a unique or primary key taken is hookd.ErrConflict, a foreign key that
// points nowhere (an endpoint of a missing application) is hookd.ErrNotFound, and a file that
// cannot be written just now (see fileFault) is hookd.ErrUnavailable.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return hookd.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", hookd.ErrConflict, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w: %w", hookd.ErrNotFound, err)
		}
	}
	return unavailable(err)
}

// conflictOf returns err, when it says that a unique key of an entity (an application, an
// endpoint) is taken, as a *hookd.ConflictError (sqlstore.Conflict); any other error as it is.
func conflictOf(err error, entity, id, uid string) error {
	return sqlstore.Conflict(err, conflictColumns(err), entity, id, uid)
}

// conflictColumns returns the columns of the unique key that err says is taken, without their
// table (SQLite's message: "UNIQUE constraint failed: hookd_endpoints.app_id,
// hookd_endpoints.uid"), or nil when err says no such thing.
func conflictColumns(err error) []string {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	if c := se.Code(); c != sqlite3.SQLITE_CONSTRAINT_UNIQUE && c != sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
		return nil
	}
	msg := se.Error()
	i := strings.LastIndex(msg, "constraint failed: ")
	if i < 0 {
		return nil
	}
	list, _, _ := strings.Cut(msg[i+len("constraint failed: "):], " (")
	var cols []string
	for col := range strings.SplitSeq(list, ",") {
		col = strings.TrimSpace(col)
		if _, name, ok := strings.Cut(col, "."); ok {
			col = name
		}
		cols = append(cols, col)
	}
	return cols
}

// fileFault reports whether an SQLite result code (primary or extended) says that the database's
// files cannot be written or read just now, through no fault of the statement: the disk is full
// (SQLITE_FULL), the operating system refused a read or write (SQLITE_IOERR_*: EIO, EFBIG past a
// file size limit, EROFS or EPERM on a file made unwritable), the file or its directory is
// read-only (SQLITE_READONLY_*), or a file cannot be opened (SQLITE_CANTOPEN_*). The statement,
// or the whole transaction, is rolled back (by SQLite, or by InTx); once the operator frees space
// or fixes the permissions the same write succeeds, on the same connection.
func fileFault(code int) bool {
	switch code & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// unavailable marks err with hookd.ErrUnavailable when it carries an SQLite file fault and is not
// marked yet; any other error comes back as it is.
func unavailable(err error) error {
	var se *sqlite.Error
	if err == nil || errors.Is(err, hookd.ErrUnavailable) || !errors.As(err, &se) || !fileFault(se.Code()) {
		return err
	}
	return fmt.Errorf("%w: %w", hookd.ErrUnavailable, err)
}

// mustAffect returns hookd.ErrNotFound when an UPDATE or DELETE touched no row.
func mustAffect(res sql.Result, err error) error {
	if err != nil {
		return classify(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return hookd.ErrNotFound
	}
	return nil
}
