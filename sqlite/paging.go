package sqlite

import (
	"context"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/sqlstore"
)

// list returns one page of l per opts, its statements run on q.
func list[T any](ctx context.Context, q querier, l *sqlstore.List, opts hookd.ListOptions,
	scan func(sqlstore.Scanner) (T, error), keyOf func(*T) string,
) (*hookd.Page[T], error) {
	fetch := func(query string, args []any) ([]T, error) { return collect(ctx, q, query, args, scan) }
	return sqlstore.Page(l, opts, keyOf, fetch, func(query string, args []any) (found bool, err error) {
		return found, unavailable(q.QueryRowContext(ctx, query, args...).Scan(&found))
	})
}
