package sqlite

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hookd/hookd"
)

// classify maps driver errors to hookd's sentinels, keeping the original in the chain: no row is
// hookd.ErrNotFound, a unique or primary key taken is hookd.ErrConflict, and a foreign key that
// points nowhere (an endpoint of a missing application) is hookd.ErrNotFound.
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
	return err
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
