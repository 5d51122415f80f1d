package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/hookd/hookd/internal/sqlstore"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries runs statements on the database (the Store's reads) or on one transaction (a Tx's reads
// and writes).
type queries struct {
	sharedReads // the reads written once in package sqlstore, on q
	q           querier
	tx          *sql.Tx // nil outside a transaction
	stmts       *statements
}

// sharedReads names the embedded sqlstore.Reads unexported: its methods are the store's, the
// value itself stays inside the package.
type sharedReads = sqlstore.Reads

// newQueries returns the statements of the store on q (tx when q is one), the reads of package
// sqlstore among them.
func newQueries(q querier, tx *sql.Tx, stmts *statements) queries {
	return queries{sharedReads: sqlstore.NewReads(dialect, sqlQuerier{q}, &columns), q: q, tx: tx, stmts: stmts}
}

// stmt returns a statement prepared once at Open, bound to the transaction when there is one.
func (q *queries) stmt(ctx context.Context, s *sql.Stmt) *sql.Stmt {
	if q.tx != nil {
		return q.tx.StmtContext(ctx, s)
	}
	return s
}

// statements are hot statements, prepared once at Open: the worker's loads and a send's inserts.
type statements struct {
	insertMessage          *sql.Stmt
	loadWork               *sql.Stmt
	getEndpointByID        *sql.Stmt
	insertOperationalEvent *sql.Stmt

	// Multi-row statements, for InsertDeliveries and RecordAttempts.
	insertDeliveries *batchStmt
	insertAttempts   *batchStmt
	updateDeliveries *batchStmt
	updateHealth     *batchStmt
	insertJobs       *batchStmt
	deleteJobs       *batchStmt
	countHours       *batchStmt
}

func prepareStatements(ctx context.Context, db *sql.DB) (*statements, error) {
	s := &statements{}
	for _, p := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&s.insertMessage, insertMessageSQL},
		{&s.loadWork, loadWorkSQL},
		{&s.getEndpointByID, getEndpointByIDSQL},
		{&s.insertOperationalEvent, insertOperationalEventSQL},
	} {
		st, err := db.PrepareContext(ctx, p.query)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare %q: %w", p.query, err), s.close())
		}
		*p.dst = st
	}
	for _, p := range []struct {
		dst    **batchStmt
		sqlFor func(rows int) string
	}{
		{&s.insertDeliveries, insertDeliveriesSQL},
		{&s.insertAttempts, insertAttemptsSQL},
		{&s.updateDeliveries, updateDeliveriesSQL},
		{&s.updateHealth, updateHealthSQL},
		{&s.insertJobs, insertJobsSQL},
		{&s.deleteJobs, deleteJobsSQL},
		{&s.countHours, countHoursSQL},
	} {
		b, err := prepareBatch(ctx, db, p.sqlFor)
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		*p.dst = b
	}
	return s, nil
}

func (s *statements) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{
		s.insertMessage, s.loadWork, s.getEndpointByID, s.insertOperationalEvent,
	} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for _, b := range []*batchStmt{s.insertDeliveries, s.insertAttempts, s.updateDeliveries, s.updateHealth, s.insertJobs, s.deleteJobs, s.countHours} {
		if b != nil {
			errs = append(errs, b.close())
		}
	}
	return errors.Join(errs...)
}

// collect runs query on q and returns every row, each read by scan. Errors are classified.
func collect[T any](ctx context.Context, q querier, query string, args []any, scan func(sqlstore.Scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out, err := sqlstore.Collect(rows, scan)
	return out, unavailable(err)
}

// jsonList is ids as one JSON array, for IN (SELECT value FROM json_each(?)): one parameter
// however many ids, where a parameter each would meet SQLite's limit on a statement's
// parameters (32,766).
func jsonList(ids []string) string {
	b, _ := json.Marshal(ids) // a []string always encodes
	return string(b)
}

// reader is q's database or transaction as package sqlstore runs reads on it.
func (q *queries) reader() sqlstore.Querier { return sqlQuerier{q.q} }

// sqlQuerier runs package sqlstore's reads on a querier, classifying their errors as collect does.
type sqlQuerier struct{ q querier }

func (s sqlQuerier) Query(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
	rows, err := s.q.QueryContext(ctx, query, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	return unavailable(sqlstore.Each(rows, each))
}

func (s sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Scanner {
	return classifiedRow{s.q.QueryRowContext(ctx, query, args...)}
}

// classifiedRow is a row whose Scan errors are classified: no row is hookd.ErrNotFound.
type classifiedRow struct{ r *sql.Row }

func (c classifiedRow) Scan(dest ...any) error { return classify(c.r.Scan(dest...)) }
