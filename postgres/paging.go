package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/paging"
)

// listQuery is one list: rows of from (tables with their aliases) selecting cols, filtered by
// where, paged by the key column key (COLLATE "C", so that its order is bytewise). The first of
// cols must be the key's value. Conditions are written with ? marks, numbered $1 ... when the
// query is built.
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
}

type condition struct {
	sql  string
	args []any
}

func (l *listQuery) filter(cond string, args ...any) {
	l.where = append(l.where, cond)
	l.args = append(l.args, args...)
}

// equal filters col = value when value is set.
func (l *listQuery) equal(col, value string) {
	if value != "" {
		l.filter(col+" = ?", value)
	}
}

// anyOf filters rows matching one of conds, which must exclude each other. With more than one,
// the query becomes a UNION ALL of one query per condition, each walking its own index range in
// key order, which PostgreSQL merges (Merge Append) and stops at the page's end: a single
// "event_type = ANY (...)" range scan on (app_id, event_type, id) is not in id order, so it
// would read every matching row to sort them.
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
		q, args := l.branchSQL(selectList, bound, ascending, limit, nil)
		return numbered(q), args
	}
	var b strings.Builder
	var args []any
	b.WriteString("SELECT * FROM (")
	for i := range l.branches {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		q, a := l.branchSQL(selectList, bound, ascending, limit, &l.branches[i])
		fmt.Fprintf(&b, "(%s)", q)
		args = append(args, a...)
	}
	b.WriteString(") u")
	if limit > 0 {
		fmt.Fprintf(&b, " ORDER BY 1%s LIMIT %d", direction(ascending), limit)
	}
	return numbered(b.String()), args
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

// numbered replaces the ? marks of q, in order, with $1, $2 ... No statement of this package
// has a ? of its own (a literal, or jsonb's ? operators).
func numbered(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for {
		i := strings.IndexByte(q, '?')
		if i < 0 {
			b.WriteString(q)
			return b.String()
		}
		n++
		b.WriteString(q[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		q = q[i+1:]
	}
}

// exists reports whether a row lies beyond bound in the given direction.
func (l *listQuery) exists(ctx context.Context, c conn, bound string, ascending bool) (bool, error) {
	inner, args := l.sql("1", bound, ascending, 0)
	var found bool
	if err := c.queryRow(ctx, "SELECT EXISTS ("+inner+")", args...).Scan(&found); err != nil {
		return false, err
	}
	return found, nil
}

// list returns one page of l per opts (iterators as paging.Build sets them).
func list[T any](ctx context.Context, c conn, l *listQuery, opts hookd.ListOptions,
	scan func(row) (T, error), keyOf func(*T) string,
) (*hookd.Page[T], error) {
	limit := paging.Limit(opts.Limit)
	if l.fromTime && l.newestFirst && opts.Iterator == "" {
		query, args := l.sql(l.cols, "", true, limit+1)
		data, err := collect(ctx, c, query, args, scan)
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
	data, err := collect(ctx, c, query, args, scan)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []T{}
	}

	return paging.Build(data, limit, backward, forward, opts.Iterator, keyOf, func(bound string, ascending bool) (bool, error) {
		return l.exists(ctx, c, bound, ascending)
	})
}

// collect runs query and scans every row, closing the rows before it returns (a pgx connection
// runs nothing else while rows are open). No row gives nil.
func collect[T any](ctx context.Context, c conn, query string, args []any, scan func(row) (T, error)) ([]T, error) {
	rs, err := c.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		item, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
