package postgres

import (
	"context"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// list returns one page of l per opts, its statements run on c. An empty page's Data is empty,
// not nil.
func list[T any](ctx context.Context, c conn, l *sqlstore.List, opts hookd.ListOptions,
	scan func(sqlstore.Scanner) (T, error), keyOf func(*T) string,
) (*hookd.Page[T], error) {
	return sqlstore.Page(l, opts, keyOf,
		func(query string, args []any) ([]T, error) {
			data, err := collect(ctx, c, query, args, scan)
			if data == nil && err == nil {
				data = []T{}
			}
			return data, err
		},
		func(query string, args []any) (found bool, err error) {
			err = c.queryRow(ctx, query, args...).Scan(&found)
			return found, err
		})
}

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
