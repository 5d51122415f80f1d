package postgres

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookd/hookd"
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
	if err == nil {
		return nil
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
