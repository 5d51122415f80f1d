package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/paging"
)

// listQuery is one list: rows of from (tables with their aliases) selecting cols, filtered by
// where, paged by the key column key. The first of cols must be the key's value.
type listQuery struct {
	cols        string
	from        string
	key         string
	where       []string
	args        []any
	branches    []condition // when set, rows match one of these (disjoint) conditions
	newestFirst bool        // list order is key descending
	// fromTime, on a newest-first list filtered from a time on, makes its first page the items
	// right after that time (paging.BuildAfter) rather than the newest.
	fromTime bool
	led      bool // a filter through equal leads the query
}

type condition struct {
	sql  string
	args []any
}

func (l *listQuery) filter(cond string, args ...any) {
	l.where = append(l.where, cond)
	l.args = append(l.args, args...)
}

// equal filters col = value when value is set. Call it for the filter columns most selective
// first: the first one set leads the query through its index, and the others are written +col,
// which SQLite does not use an index for. Without statistics (no ANALYZE) SQLite would otherwise
// pick an index by itself, such as the application's for the attempts of one endpoint, and scan
// every attempt of the application to find a page.
func (l *listQuery) equal(col, value string) {
	if value == "" {
		return
	}
	if l.led {
		col = "+" + col
	}
	l.led = true
	l.filter(col+" = ?", value)
}

// anyOf filters rows matching one of conds, which must exclude each other. With more than one,
// the query becomes a UNION ALL of one query per condition, each walking its own index range in
// key order (SQLite does not merge index ranges: "event_type IN (a, b)" would walk the
// application's messages and test each).
func (l *listQuery) anyOf(conds ...condition) {
	if len(conds) == 1 {
		l.filter(conds[0].sql, conds[0].args...)
		return
	}
	l.branches = conds
}

// sql returns the query for the rows whose key is beyond bound (none when bound is "") in the
// given direction of the key, ascending or descending, at most limit of them in key order; with
// limit 0, in no order.
func (l *listQuery) sql(selectList, bound string, ascending bool, limit int) (string, []any) {
	if len(l.branches) == 0 {
		return l.branchSQL(selectList, bound, ascending, limit, nil)
	}
	var b strings.Builder
	var args []any
	if limit > 0 {
		b.WriteString("SELECT * FROM (")
	}
	for i := range l.branches {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		q, a := l.branchSQL(selectList, bound, ascending, limit, &l.branches[i])
		b.WriteString("SELECT * FROM (" + q + ")")
		args = append(args, a...)
	}
	if limit > 0 {
		fmt.Fprintf(&b, ") ORDER BY 1%s LIMIT %d", direction(ascending), limit)
	}
	return b.String(), args
}

func (l *listQuery) branchSQL(selectList, bound string, ascending bool, limit int, branch *condition) (string, []any) {
	where := slices.Clone(l.where)
	args := slices.Clone(l.args)
	if branch != nil {
		where = append(where, branch.sql)
		args = append(args, branch.args...)
	}
	if bound != "" {
		op := "<"
		if ascending {
			op = ">"
		}
		where = append(where, l.key+" "+op+" ?")
		args = append(args, bound)
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(selectList)
	b.WriteString(" FROM ")
	b.WriteString(l.from)
	if len(where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(where, " AND "))
	}
	if limit > 0 {
		fmt.Fprintf(&b, " ORDER BY %s%s LIMIT %d", l.key, direction(ascending), limit)
	}
	return b.String(), args
}

func direction(ascending bool) string {
	if ascending {
		return " ASC"
	}
	return " DESC"
}

// exists reports whether a row lies beyond bound in the given direction.
func (l *listQuery) exists(ctx context.Context, q querier, bound string, ascending bool) (bool, error) {
	inner, args := l.sql("1", bound, ascending, 0)
	var found bool
	if err := q.QueryRowContext(ctx, "SELECT EXISTS ("+inner+")", args...).Scan(&found); err != nil {
		return false, unavailable(err)
	}
	return found, nil
}

// list returns one page of l per opts (iterators as paging.Build sets them).
func list[T any](ctx context.Context, q querier, l *listQuery, opts hookd.ListOptions,
	scan func(rowScanner) (T, error), keyOf func(*T) string,
) (*hookd.Page[T], error) {
	limit := paging.Limit(opts.Limit)
	if l.fromTime && l.newestFirst && opts.Iterator == "" {
		query, args := l.sql(l.cols, "", true, limit+1)
		data, err := collect(ctx, q, query, args, scan)
		if err != nil {
			return nil, err
		}
		return paging.BuildAfter(data, limit, keyOf), nil
	}
	// forward is the direction of the key in list order.
	forward := !l.newestFirst
	backward := opts.Backward && opts.Iterator != ""
	ascending := forward
	if backward {
		ascending = !forward
	}
	query, args := l.sql(l.cols, opts.Iterator, ascending, limit+1)
	data, err := collect(ctx, q, query, args, scan)
	if err != nil {
		return nil, err
	}
	return paging.Build(data, limit, backward, forward, opts.Iterator, keyOf, func(bound string, ascending bool) (bool, error) {
		return l.exists(ctx, q, bound, ascending)
	})
}
