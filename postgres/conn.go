package postgres

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookd/hookd/internal/sqlstore"
)

// conn is what the store's statements run on: the pool (the Store's reads), a pgx.Tx (InTx, and
// WrapTx of a pgx.Tx) or a *sql.Tx of pgx's database/sql driver (WrapTx). Statements use $1 ...
// placeholders, which both accept, and scan only into types both scan into (string, int, int64,
// bool, []byte, time.Time, sql.NullString, sql.NullTime). Arguments reach pgx unconverted
// either way (pgx's database/sql driver passes every value through), so slices bind as arrays.
// Every error that says the connection was lost or the server could not be reached comes back
// marked hookd.ErrUnavailable (see unavailable), from the statement, the row's Scan or the rows'
// Err alike, so that no caller can forget it and answer 500 where 503 is due.
type conn interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	query(ctx context.Context, query string, args ...any) (rows, error)
	queryRow(ctx context.Context, query string, args ...any) row
}

// row is one result row: pgx.Row or *sql.Row.
type row = sqlstore.Scanner

// rows is a result set: pgx.Rows, or *sql.Rows through sqlRows.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// pgxQuerier is what *pgxpool.Pool, *pgxpool.Conn, *pgx.Conn and pgx.Tx have in common.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgxConn runs statements through pgx.
type pgxConn struct{ q pgxQuerier }

func (c pgxConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	if err != nil {
		return 0, unavailable(err)
	}
	return tag.RowsAffected(), nil
}

func (c pgxConn) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	return markedRows{r}, nil
}

func (c pgxConn) queryRow(ctx context.Context, query string, args ...any) row {
	return markedRow{c.q.QueryRow(ctx, query, args...)}
}

// sqlConn runs statements through a *sql.Tx of pgx's database/sql driver (pgx/v5/stdlib).
type sqlConn struct{ tx *sql.Tx }

func (c sqlConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, unavailable(err)
	}
	return res.RowsAffected()
}

func (c sqlConn) query(ctx context.Context, query string, args ...any) (rows, error) {
	r, err := c.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err)
	}
	return markedRows{sqlRows{r}}, nil
}

func (c sqlConn) queryRow(ctx context.Context, query string, args ...any) row {
	return markedRow{c.tx.QueryRowContext(ctx, query, args...)}
}

// sqlRows is *sql.Rows with pgx's Close, which returns nothing: Err reports what went wrong.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// markedRow is a row whose Scan marks a lost connection (see unavailable).
type markedRow struct{ row }

func (r markedRow) Scan(dest ...any) error { return unavailable(r.row.Scan(dest...)) }

// markedRows is a result set whose Scan and Err mark a lost connection (see unavailable).
type markedRows struct{ rows }

func (r markedRows) Scan(dest ...any) error { return unavailable(r.rows.Scan(dest...)) }
func (r markedRows) Err() error             { return unavailable(r.rows.Err()) }

// sharedReads names the embedded sqlstore.Reads unexported: its methods are the store's, the
// value itself stays inside the package.
type sharedReads = sqlstore.Reads

// newQueries returns the statements of the store on c, the reads of package sqlstore among them.
func newQueries(c conn) queries {
	return queries{sharedReads: sqlstore.NewReads(dialect, reader{c}, &columns), c: c}
}

// reader is q's connection or transaction as package sqlstore runs reads on it.
func (q *queries) reader() sqlstore.Querier { return reader{q.c} }

// reader runs package sqlstore's reads on a conn (whose errors are marked already); a row's
// errors are classified.
type reader struct{ c conn }

// Query plans each run for its arguments (pgx.QueryExecModeExec: an unnamed statement), where a
// statement cached by pgx gets one generic plan after five runs. The lists' rows are skewed (an
// application of most messages beside ones of a few; a time bound near the newest or the
// oldest), and a generic plan, made for an average argument, walks the primary key in id order
// testing the application (correlated with the table, it looks cheapest) where a small
// application's list must walk its own index: TestListPlansOnAFilledDatabase. Planning a list
// costs a fraction of a millisecond.
func (r reader) Query(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
	if _, ok := r.c.(pgxConn); ok {
		args = append([]any{pgx.QueryExecModeExec}, args...)
	}
	rs, err := r.c.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	return sqlstore.Each(rs, each)
}

func (r reader) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Scanner {
	return classifiedRow{r.c.queryRow(ctx, query, args...)}
}

// classifiedRow is a row whose Scan errors are classified: no row is hookd.ErrNotFound.
type classifiedRow struct{ r row }

func (c classifiedRow) Scan(dest ...any) error { return classify(c.r.Scan(dest...)) }

// collect runs query and scans every row, closing the rows before it returns (a pgx connection
// runs nothing else while rows are open). No row gives nil.
func collect[T any](ctx context.Context, c conn, query string, args []any, scan func(sqlstore.Scanner) (T, error)) ([]T, error) {
	rs, err := c.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	return sqlstore.Collect(rs, scan)
}
