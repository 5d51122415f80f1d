package sqlstore

import (
	"context"
	"fmt"
)

// Scanner is one result row: *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result set being read: *sql.Rows or pgx.Rows. Its owner closes it (the two Close
// methods differ).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Each calls each for every row of rows, in order, until each fails.
func Each(rows Rows, each func(Scanner) error) error {
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Collect reads every row of rows with scan. No row gives nil. Errors are returned as the
// driver gave them, for the store to classify.
func Collect[T any](rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Unique returns v without repeats, in first-seen order.
func Unique(v []string) []string {
	if len(v) < 2 {
		return v
	}
	seen := make(map[string]bool, len(v))
	out := make([]string, 0, len(v))
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// maxTypeBranches bounds the event types a message list walks one index range each for; past it
// the list tests each of the application's messages against the set, in one parameter, so a
// filter may name any number of event types.
const maxTypeBranches = 32

// Get runs query, whose one row scan reads. An error is wrapped as format names the operation
// (with what as its arguments); no row is hookd.ErrNotFound when q classifies as the stores do.
func Get[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args []any,
	format string, what ...any,
) (*T, error) {
	item, err := scan(q.QueryRow(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf(format+": %w", append(what, err)...)
	}
	return &item, nil
}
