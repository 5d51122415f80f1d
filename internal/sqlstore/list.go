package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/internal/paging"
)

// List is one list: rows of From (tables with their aliases) selecting Cols, filtered by the
// conditions added, paged by the key column Key. The first of Cols must be the key's value.
// Conditions are written with ? marks; a Numbered dialect numbers them $1 ... when the query is
// built, so no condition may hold a ? of its own (a literal, or jsonb's ? operators).
type List struct {
	Cols string
	From string
	Key  string
	// NewestFirst orders the list by key descending.
	NewestFirst bool
	// FromTime, on a newest-first list filtered from a time on, makes its first page the items
	// right after that time (paging.BuildAfter) rather than the newest.
	FromTime bool

	dialect  *Dialect
	where    []string
	args     []any
	branches []Condition // when set, rows match one of these (disjoint) conditions
	led      bool        // an Equal filter leads the query
}

// Condition is a SQL condition with ? marks and its arguments.
type Condition struct {
	SQL  string
	Args []any
}

// NewList returns the list of cols from from, paged by key, in d's dialect.
func NewList(d *Dialect, cols, from, key string) *List {
	return &List{Cols: cols, From: from, Key: key, dialect: d}
}

// Filter adds a condition every row must meet.
func (l *List) Filter(cond string, args ...any) {
	l.where = append(l.where, cond)
	l.args = append(l.args, args...)
}

// Equal filters col = value when value is set. Call it for the filter columns most selective
// first: in a LeadingFilter dialect the first one set leads the query through its index.
func (l *List) Equal(col, value string) {
	if value == "" {
		return
	}
	if l.led && l.dialect.LeadingFilter != nil {
		col = l.dialect.LeadingFilter(col)
	}
	l.led = true
	l.Filter(col+" = ?", value)
}

// AnyOf filters rows matching one of conds, which must exclude each other. With more than one,
// the query becomes a UNION ALL of one query per condition, each walking its own index range in
// key order: neither SQLite nor PostgreSQL reads "event_type IN (a, b)" in key order (SQLite walks
// the application's messages and tests each; PostgreSQL's single range scan on (app_id,
// event_type, id) would read every matching row to sort them).
func (l *List) AnyOf(conds ...Condition) {
	if len(conds) == 1 {
		l.Filter(conds[0].SQL, conds[0].Args...)
		return
	}
	l.branches = conds
}

// SQL returns the query for the rows whose key is beyond bound (none when bound is "") in the
// given direction of the key, ascending or descending, at most limit of them in key order; with
// limit 0, in no order.
func (l *List) SQL(selectList, bound string, ascending bool, limit int) (string, []any) {
	q, args := l.union(selectList, bound, ascending, limit)
	if l.dialect.Numbered {
		q = numbered(q)
	}
	return q, args
}

// ExistsSQL returns a query of one boolean: whether a row lies beyond bound in the given
// direction.
func (l *List) ExistsSQL(bound string, ascending bool) (string, []any) {
	inner, args := l.SQL("1", bound, ascending, 0)
	return "SELECT EXISTS (" + inner + ")", args
}

func (l *List) union(selectList, bound string, ascending bool, limit int) (string, []any) {
	if len(l.branches) == 0 {
		return l.branchSQL(selectList, bound, ascending, limit, nil)
	}
	merged := l.dialect.MergedUnion
	var b strings.Builder
	var args []any
	if limit > 0 || merged {
		b.WriteString("SELECT * FROM (")
	}
	for i := range l.branches {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		q, a := l.branchSQL(selectList, bound, ascending, limit, &l.branches[i])
		if merged {
			fmt.Fprintf(&b, "(%s)", q)
		} else {
			b.WriteString("SELECT * FROM (" + q + ")")
		}
		args = append(args, a...)
	}
	switch {
	case merged:
		b.WriteString(") u")
	case limit > 0:
		b.WriteString(")")
	}
	if limit > 0 {
		fmt.Fprintf(&b, " ORDER BY 1%s LIMIT %d", direction(ascending), limit)
	}
	return b.String(), args
}

func (l *List) branchSQL(selectList, bound string, ascending bool, limit int, branch *Condition) (string, []any) {
	where := slices.Clone(l.where)
	args := slices.Clone(l.args)
	if branch != nil {
		where = append(where, branch.SQL)
		args = append(args, branch.Args...)
	}
	if bound != "" {
		op := "<"
		if ascending {
			op = ">"
		}
		where = append(where, l.Key+" "+op+" ?")
		args = append(args, bound)
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(selectList)
	b.WriteString(" FROM ")
	b.WriteString(l.From)
	if len(where) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(where, " AND "))
	}
	if limit > 0 {
		fmt.Fprintf(&b, " ORDER BY %s%s LIMIT %d", l.Key, direction(ascending), limit)
	}
	return b.String(), args
}

func direction(ascending bool) string {
	if ascending {
		return " ASC"
	}
	return " DESC"
}

// numbered replaces the ? marks of q, in order, with $1, $2 ...
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

// Page returns one page of l per opts (iterators as paging.Build sets them), its statements run
// on q and its rows read with scan. An empty page's Data is empty, not nil.
func Page[T any](ctx context.Context, q Querier, l *List, opts hookd.ListOptions,
	scan func(Scanner) (T, error), keyOf func(*T) string,
) (*hookd.Page[T], error) {
	fetch := func(query string, args []any) ([]T, error) {
		data := []T{}
		err := q.Query(ctx, query, args, func(r Scanner) error {
			item, err := scan(r)
			data = append(data, item)
			return err
		})
		return data, err
	}
	limit := paging.Limit(opts.Limit)
	if l.FromTime && l.NewestFirst && opts.Iterator == "" {
		data, err := fetch(l.SQL(l.Cols, "", true, limit+1))
		if err != nil {
			return nil, err
		}
		return paging.BuildAfter(data, limit, keyOf), nil
	}
	// forward is the direction of the key in list order.
	forward := !l.NewestFirst
	backward := opts.Backward && opts.Iterator != ""
	ascending := forward
	if backward {
		ascending = !forward
	}
	data, err := fetch(l.SQL(l.Cols, opts.Iterator, ascending, limit+1))
	if err != nil {
		return nil, err
	}
	return paging.Build(data, limit, backward, forward, opts.Iterator, keyOf, func(bound string, ascending bool) (bool, error) {
		// Through Query, which a store may plan per run (see the lists' own reads).
		query, args := l.ExistsSQL(bound, ascending)
		var found bool
		err := q.Query(ctx, query, args, func(r Scanner) error { return r.Scan(&found) })
		return found, err
	})
}
